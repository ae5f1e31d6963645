"""What the CLI refuses, and how: one line naming the problem and the fix, exit code 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kevolve.client.jobclient import SUBMIT_TIMEOUT_S
from kevolve.client.launcher import exposure_error
from kevolve.config import REPO_ROOT
from services.controller.config import PROBE_REPLY_MARGIN_S, ControllerSettings

SOFTMAX = REPO_ROOT / "examples" / "softmax.py"


def kevolve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("KEVOLVE_")}
    return subprocess.run([sys.executable, "-m", "kevolve.client.main", *args],
                          env={**base, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "60", **(env or {})},
                          capture_output=True, text=True, timeout=60)


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    return lines[0]


@pytest.mark.parametrize("how", [["--host", "0.0.0.0"], []])
def test_up_refuses_every_interface_without_tokens_or_the_flag(tmp_path: Path, how: list[str]) -> None:
    env = {} if how else {"KEVOLVE_CONTROLLER_GRPC_HOST": "0.0.0.0"}
    line = one_line_error(kevolve("up", "--run-dir", str(tmp_path / "run"), *how, env=env))
    assert "0.0.0.0" in line and "KEVOLVE_CONTROLLER_TOKENS" in line and "--insecure-open" in line
    assert not (tmp_path / "run").exists()   # refused before anything started


def test_exposure_needs_loopback_tokens_or_an_explicit_flag() -> None:
    assert exposure_error("127.0.0.1", {}, insecure_open=False) is None
    assert exposure_error("::1", {}, insecure_open=False) is None
    assert exposure_error("localhost", {}, insecure_open=False) is None
    assert exposure_error("0.0.0.0", {"KEVOLVE_CONTROLLER_TOKENS": "t=alice"}, insecure_open=False) is None
    assert exposure_error("192.168.1.5", {}, insecure_open=True) is None
    assert "--insecure-open" in (exposure_error("192.168.1.5", {}, insecure_open=False) or "")
    assert "--insecure-open" in (exposure_error("::", {"KEVOLVE_CONTROLLER_TOKENS": " , "}, False) or "")
    assert "not token=tenant" in (exposure_error("0.0.0.0", {"KEVOLVE_CONTROLLER_TOKENS": "oops"}, False) or "")


@pytest.mark.parametrize("content, said", [
    (b"\x7fELF\x02\x01\x01\x00\xff\xfe binary", "is not UTF-8 text"),
    (b"class Model:\x00 pass\n", "is not text (it contains NUL bytes)"),
])
def test_a_binary_spec_is_one_line_error_for_submit_and_eval(tmp_path: Path, content: bytes, said: str) -> None:
    spec = tmp_path / "SPEC.py"
    spec.write_bytes(content)
    for args in (["submit", str(spec), "--run-dir", str(tmp_path / "none")], ["eval", str(spec), str(SOFTMAX)],
                 ["eval", str(SOFTMAX), str(spec)]):
        line = one_line_error(kevolve(*args))
        assert line.startswith(f"error: {spec} {said}"), line


def test_an_unreadable_spec_is_one_line_error(tmp_path: Path) -> None:
    assert one_line_error(kevolve("submit", str(tmp_path), "--run-dir", str(tmp_path))) \
        == f"error: {tmp_path} is a directory, not a Python file"
    missing = tmp_path / "missing.py"
    assert one_line_error(kevolve("eval", str(missing), str(SOFTMAX))) \
        == f"error: cannot read {missing}: No such file or directory"


def test_the_submit_deadline_outlasts_the_probe_the_controller_runs_by_default() -> None:
    # A hanging spec must be reported by the controller before the CLI's own deadline expires.
    defaults = ControllerSettings()
    assert defaults.spec_probe_timeout_s + defaults.spec_probe_queue_s + PROBE_REPLY_MARGIN_S \
        <= defaults.max_deadline_s < SUBMIT_TIMEOUT_S


def test_version_is_printed_and_commands_still_run_after_the_callback() -> None:
    import kevolve as package

    done = kevolve("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"kevolve {package.__version__}"
    # The top-level callback takes no command's place: commands still parse their options.
    assert kevolve("status", "--help").returncode == 0
