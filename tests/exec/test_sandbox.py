"""kevolve.exec.sandbox: the containment every candidate (and spec) runs under.

These run raw Python scripts, not candidates: the static checks would stop such code before
it ran, so here we prove the second line of defence holds on its own.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import psutil
import pytest

from kevolve.exec import sandbox

LIMITS = sandbox.Limits(timeout_s=20, memory_mb=512, max_procs=8)
needs_bwrap = pytest.mark.skipif(sandbox.bwrap_status()[0] is None, reason="bubblewrap cannot run here")


def _run(
    tmp_path: Path, code: str, limits: sandbox.Limits = LIMITS, **kwargs: object
) -> sandbox.SandboxResult:
    return sandbox.run([sys.executable, "-c", code], scratch=tmp_path / "scratch", limits=limits, **kwargs)  # type: ignore[arg-type]


def test_environment_is_scrubbed_of_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "leak-me")
    monkeypatch.setenv("KEVOLVE_S3_SECRET_KEY", "leak-me")
    monkeypatch.setenv("OPENAI_API_KEY", "leak-me")
    res = _run(
        tmp_path,
        "import os; print(sorted(os.environ.items()))",
        env={"KEVOLVE_DATABASE_URL": "postgres://x", "GITHUB_TOKEN": "t", "HARMLESS": "1"},
    )
    assert res.returncode == 0, res.stderr
    assert "leak-me" not in res.stdout and "postgres://" not in res.stdout and "'t'" not in res.stdout
    assert "HARMLESS" in res.stdout and str(tmp_path / "scratch") in res.stdout  # HOME is the scratch dir


def test_timeout_kills_the_whole_group_including_children(tmp_path: Path) -> None:
    code = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'])\n"
        "print(p.pid, flush=True); time.sleep(600)"
    )
    started = time.monotonic()
    res = _run(tmp_path, code, sandbox.Limits(timeout_s=3, memory_mb=512, max_procs=8))
    assert res.killed_for == "timeout" and time.monotonic() - started < 15
    time.sleep(0.5)
    mine = [
        p
        for p in psutil.process_iter(["cmdline"])
        if "time.sleep(600)" in " ".join(p.info["cmdline"] or [])
        and "signal.SIG_IGN" in " ".join(p.info["cmdline"] or [])
    ]
    assert not [p for p in mine if p.status() != psutil.STATUS_ZOMBIE], "a child survived the deadline"


def test_memory_bomb_is_stopped(tmp_path: Path) -> None:
    res = _run(tmp_path, "x = bytearray(8 * 1024**3)\nprint('allocated')")
    assert "allocated" not in res.stdout
    assert "MemoryError" in res.stderr or res.killed_for == "memory"


def test_fork_bomb_is_killed(tmp_path: Path) -> None:
    code = "import os, time\nfor _ in range(200):\n    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)\ntime.sleep(60)"
    started = time.monotonic()
    res = _run(tmp_path, code)
    assert res.killed_for == "procs" or res.returncode != 0
    assert time.monotonic() - started < 15


def test_segfault_is_reported_as_a_signal(tmp_path: Path) -> None:
    res = _run(tmp_path, "import ctypes; ctypes.string_at(0)")
    assert res.signal == 11, (res.returncode, res.stderr)


@needs_bwrap
def test_no_network_under_bubblewrap(tmp_path: Path) -> None:
    # A server on the host's loopback: a process in its own network namespace cannot reach it.
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        res = _run(
            tmp_path,
            f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    print('CONNECTED')\nexcept OSError as e:\n    print('blocked', e)",
        )
    finally:
        server.close()
    assert res.mode == "bwrap"
    assert "blocked" in res.stdout and "CONNECTED" not in res.stdout


@needs_bwrap
def test_the_child_sees_only_the_python_environment_and_its_scratch(tmp_path: Path) -> None:
    """The view is built from nothing: the host's secrets, the repository, the run dir and the
    home directory do not exist in it; the code packages are there, read-only."""
    from kevolve.config import REPO_ROOT

    private = tmp_path / "private"
    private.mkdir()
    (private / "expected.pt").write_text("the answer")
    target = REPO_ROOT / "kevolve" / "config.py"
    probes = ["/etc/shadow", "/etc/passwd", str(Path.home() / ".ssh"), str(REPO_ROOT / "README.md"),
              str(REPO_ROOT / ".git"), str(private / "expected.pt"), str(private)]
    code = (
        "import os, json\nseen = {}\n"
        f"for p in {probes!r}:\n    seen[p] = os.path.exists(p)\n"
        f"try:\n    open({str(target)!r}, 'a').write('#')\n    seen['wrote'] = True\n"
        "except OSError:\n    seen['wrote'] = False\n"
        "open('mine.txt', 'w').write('ok')\nimport kevolve.specfile\nprint(json.dumps(seen))"
    )
    before = target.read_bytes()
    res = _run(tmp_path, code)
    assert res.mode == "bwrap" and res.returncode == 0, res.stderr
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    assert not any(seen.values()), seen
    assert target.read_bytes() == before and (tmp_path / "scratch" / "mine.txt").exists()


@needs_bwrap
def test_writable_paths_are_the_scratch_and_those_named(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    res = _run(tmp_path, f"open({str(cache / 'c.bin')!r}, 'w').write('x')", writable=[cache])
    assert res.returncode == 0, res.stderr
    assert (cache / "c.bin").read_text() == "x"


def test_required_isolation_refuses_to_run_without_bubblewrap(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_status", lambda: (None, "bwrap not found"))
    with pytest.raises(sandbox.IsolationUnavailable, match="bwrap not found"):
        _run(tmp_path, "print('ran')")
    res = _run(tmp_path, "print('ran')", isolation="preferred")
    assert res.stdout.strip() == "ran" and res.mode.startswith("degraded:")


def test_degraded_mode_says_why(tmp_path: Path) -> None:
    res = _run(tmp_path, "print('hi')", isolation="off")
    assert res.returncode == 0 and res.stdout.strip() == "hi"
    assert res.mode.startswith("degraded:") and "bwrap" in res.mode
    assert os.getpid() != 0  # the parent is unharmed
