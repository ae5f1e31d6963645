"""The environment each service of `kevolve up` starts with: what it needs, and nothing else.

A service gets

* a minimal base: PATH, HOME, user and locale, TMPDIR, the Python environment (this
  repository first on PYTHONPATH) and where TLS trust roots are;
* the connection settings every service shares, named by ``kevolve.config.CommonSettings``'s
  fields (NATS URL, objects URL, KB dir, logging, AckWait, ...); the S3 keys only when the
  object store is S3 (every service reads or writes it; on a local directory none needs them);
* its own settings, by the env prefix of the settings class in ``services/<name>/config.py``:
  ``KEVOLVE_CONTROLLER_*`` (tenant tokens, database URL) to the controller alone,
  ``KEVOLVE_GENERATOR_*`` (the LLM endpoint and key) to the generator alone, and so on;
* when it runs user code or Triton (the controller's spec probe, the generator's tracer, the
  evaluator, the profiler): the variables that locate the GPU and its toolchain;
* when it calls out over the network (the generator, to its LLM endpoint): the proxy settings.

Nothing else of the launcher's environment reaches a service: not cloud credentials (AWS_*,
OPENAI_API_KEY, ...), not another service's settings, not the CLI's own KEVOLVE_TOKEN.
Names are matched without regard to case, as pydantic-settings reads them.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from pydantic_settings import BaseSettings

from kevolve.config import REPO_ROOT, CommonSettings


@dataclass(frozen=True)
class Needs:
    runs_user_code: bool   # imports specs or candidates, or compiles Triton
    calls_out: bool        # talks to hosts beyond NATS and the object store


SERVICES: dict[str, Needs] = {
    "controller": Needs(runs_user_code=True, calls_out=False),
    "retriever": Needs(runs_user_code=False, calls_out=False),
    "generator": Needs(runs_user_code=True, calls_out=True),
    "evaluator": Needs(runs_user_code=True, calls_out=False),
    "profiler": Needs(runs_user_code=True, calls_out=False),
}

BASE_NAMES = frozenset({"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "VIRTUAL_ENV",
                        "SSL_CERT_FILE", "SSL_CERT_DIR"})
BASE_PREFIXES = ("LC_",)
# They say where the GPU, its driver and compilers are and how many threads to use; none
# carries a credential.
DEVICE_NAMES = frozenset({"LD_LIBRARY_PATH", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "XDG_CACHE_HOME"})
DEVICE_PREFIXES = ("CUDA_", "NVIDIA_", "TRITON_", "TORCH", "NCCL_", "NVSHMEM_")
PROXY_NAMES = frozenset({"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"})
# Even a name that fits the lists above is dropped when it looks like a credential.
_CREDENTIAL = re.compile(r"SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|ACCESS_KEY", re.IGNORECASE)


@cache
def settings_prefixes(service: str) -> tuple[str, ...]:
    """Env prefixes of the settings classes a service defines in its own config module."""
    module = importlib.import_module(f"services.{service}.config")
    prefixes = tuple(sorted({
        str(value.model_config.get("env_prefix", "")).upper() for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, BaseSettings) and value.__module__ == module.__name__
    }))
    if not prefixes or "" in prefixes or any(not p.startswith("KEVOLVE_") for p in prefixes):
        raise LookupError(f"services/{service}/config.py defines no settings class with a KEVOLVE_ prefix")
    return prefixes


def common_names(store_is_s3: bool) -> frozenset[str]:
    prefix = str(CommonSettings.model_config.get("env_prefix", "")).upper()
    return frozenset(f"{prefix}{name.upper()}" for name in CommonSettings.model_fields
                     if store_is_s3 or not name.startswith("s3_"))


def service_env(service: str, source: Mapping[str, str]) -> dict[str, str]:
    """The environment of ``service`` (controller, generator, ...), taken from ``source``.

    ``source`` is the launcher's environment with its own settings for the run already in it
    (NATS URL, objects URL, ports).
    """
    needs = SERVICES[service]
    own = settings_prefixes(service)
    objects_url = next((v for k, v in source.items() if k.upper() == "KEVOLVE_OBJECTS_URL"), "")
    common = common_names(store_is_s3=objects_url.startswith("s3://"))
    env: dict[str, str] = {}
    for name, value in source.items():
        upper = name.upper()
        if upper.startswith("KEVOLVE_"):
            keep = upper in common or upper.startswith(own)
        else:
            keep = (upper in BASE_NAMES or upper.startswith(BASE_PREFIXES)
                    or (needs.runs_user_code and (upper in DEVICE_NAMES or upper.startswith(DEVICE_PREFIXES)))
                    or (needs.calls_out and upper in PROXY_NAMES)) and not _CREDENTIAL.search(upper)
        if keep:
            env[name] = value
    inherited = source.get("PYTHONPATH", "")
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + inherited if inherited else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env
