"""Each process `kevolve up` starts holds its own settings and secrets, and nobody else's."""

from __future__ import annotations

import os
from pathlib import Path

import psutil

from kevolve.client.serviceenv import service_env, settings_prefixes
from kevolve.config import REPO_ROOT
from up_process import kevolve_up

SECRETS = {
    "KEVOLVE_CONTROLLER_TOKENS": "tok-a=alice",
    "KEVOLVE_GENERATOR_OPENAI_API_KEY": "sk-generator-only",
    "KEVOLVE_RETRIEVER_TOP_K": "5",
    "OPENAI_API_KEY": "sk-parent-shell",
    "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "KEVOLVE_S3_SECRET_KEY": "s3-secret",
    "KEVOLVE_TOKEN": "tok-a",   # the CLI user's own token: for the CLI, never for a service
    "GITHUB_TOKEN": "ghp-example",
    "TRITON_INTERPRET": "1",
}
SERVICES = ("controller", "retriever", "generator", "evaluator", "profiler")


def _environ(process: psutil.Process) -> dict[str, str]:
    raw = Path(f"/proc/{process.pid}/environ").read_bytes()
    return dict(entry.split("=", 1) for entry in raw.decode(errors="replace").split("\0") if "=" in entry)


def test_each_service_process_holds_only_its_own_settings_and_secrets(tmp_path: Path) -> None:
    with kevolve_up(tmp_path, env=SECRETS) as up:
        envs = {name: _environ(up.service(f"services.{name}")) for name in SERVICES}
        nats = _environ(up.service("nats-server"))
        # The tokens are live: the controller has them, and the CLI still needs its own token.
        assert "NOT_FOUND" in up.cli("status", "nope").stderr
        assert "UNAUTHENTICATED" in up.cli("status", "nope", env={**up.env, "KEVOLVE_TOKEN": ""}).stderr
    assert envs["controller"]["KEVOLVE_CONTROLLER_TOKENS"] == "tok-a=alice"
    assert envs["generator"]["KEVOLVE_GENERATOR_OPENAI_API_KEY"] == "sk-generator-only"
    assert envs["retriever"]["KEVOLVE_RETRIEVER_TOP_K"] == "5"
    for name, env in envs.items():
        own = f"KEVOLVE_{name.upper()}_"
        foreign = sorted(k for k in env if k.startswith("KEVOLVE_") and k.startswith(
            tuple(f"KEVOLVE_{other.upper()}_" for other in SERVICES if other != name)))
        assert not foreign, (name, foreign)
        leaked = sorted(k for k in env if k in SECRETS and not k.startswith((own, "TRITON_")))
        assert not leaked, (name, leaked)
        assert not [k for k in env if k.startswith("AWS_")], name
        # What every service does need: the bus, the store, Python, this repository.
        assert env["KEVOLVE_NATS_URL"].startswith("nats://127.0.0.1:") and env["KEVOLVE_OBJECTS_URL"]
        assert env["PATH"] and env["PYTHONPATH"].split(os.pathsep)[0] == str(REPO_ROOT)
    for name in ("controller", "generator", "evaluator", "profiler"):
        assert envs[name]["TRITON_INTERPRET"] == "1", name    # they run Triton or user code
    assert "TRITON_INTERPRET" not in envs["retriever"]
    # What runs user code works inside this run's directory, never in a host-wide one that
    # another system on the host would share.
    run_dir = up.run_dir.resolve()
    for name in ("generator", "evaluator", "profiler"):
        scratch = Path(envs[name][f"KEVOLVE_{name.upper()}_SCRATCH_DIR"])
        assert scratch.is_relative_to(run_dir / "scratch"), (name, scratch)
    assert not [k for k in nats if k.startswith(("KEVOLVE_", "AWS_", "OPENAI", "GITHUB"))], sorted(nats)


def test_the_prefixes_come_from_each_services_settings_class() -> None:
    assert settings_prefixes("controller") == ("KEVOLVE_CONTROLLER_",)
    assert settings_prefixes("evaluator") == ("KEVOLVE_EVALUATOR_",)
    source = {"KEVOLVE_OBJECTS_URL": "s3://127.0.0.1:8333/kv", "KEVOLVE_S3_ACCESS_KEY": "a",
              "KEVOLVE_S3_SECRET_KEY": "b", "kevolve_log_json": "true", "HTTPS_PROXY": "http://proxy:3128",
              "CUDA_VISIBLE_DEVICES": "0", "TORCH_API_TOKEN": "x", "PYTHONPATH": "/opt/wheels"}
    retriever = service_env("retriever", source)
    generator = service_env("generator", source)
    # An S3 store: every service reads or writes it, so each gets its keys; names match in any case.
    assert retriever["KEVOLVE_S3_SECRET_KEY"] == "b" and retriever["kevolve_log_json"] == "true"
    assert "HTTPS_PROXY" not in retriever and generator["HTTPS_PROXY"] == "http://proxy:3128"
    assert "CUDA_VISIBLE_DEVICES" not in retriever and generator["CUDA_VISIBLE_DEVICES"] == "0"
    assert "TORCH_API_TOKEN" not in generator   # a device prefix never carries a credential through
    assert generator["PYTHONPATH"].endswith(":/opt/wheels")
    local = service_env("generator", {**source, "KEVOLVE_OBJECTS_URL": "/tmp/objects"})
    assert "KEVOLVE_S3_SECRET_KEY" not in local and "KEVOLVE_S3_ACCESS_KEY" not in local
