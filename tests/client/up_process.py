"""`kevolve up` as a child process, for tests that look at it from outside as an operator does."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil

from kevolve.config import REPO_ROOT


@dataclass
class Up:
    process: subprocess.Popen[bytes]
    run_dir: Path
    env: dict[str, str]
    output: Path

    def state(self) -> dict[str, object]:
        return dict(json.loads((self.run_dir / "state.json").read_text()))

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def service(self, module: str) -> psutil.Process:
        """The live process running ``python -m <module>`` (or the nats-server binary)."""
        for child in psutil.Process(self.process.pid).children(recursive=True):
            try:
                cmdline = child.cmdline()
            except psutil.NoSuchProcess:
                continue
            if module in cmdline or (cmdline and Path(cmdline[0]).name == module):
                return child
        raise LookupError(f"no {module} under kevolve up")

    def cli(self, *args: str, timeout: float = 60, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kevolve.client.main", *args, "--run-dir", str(self.run_dir)],
                              env=env or self.env, capture_output=True, text=True, timeout=timeout)

    def wait_for_output(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.text():
            assert self.process.poll() is None, self.text()
            assert time.monotonic() < deadline, f"{text!r} never appeared in:\n{self.text()}"
            time.sleep(0.2)


@contextlib.contextmanager
def kevolve_up(tmp_path: Path, *args: str, env: dict[str, str] | None = None, ready_s: float = 120
               ) -> Iterator[Up]:
    run_dir = tmp_path / "run"
    full_env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200", **(env or {})}
    output = tmp_path / "up.out"
    with open(output, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "kevolve.client.main", "up", "--run-dir", str(run_dir),
                                    "--port", "0", *args], env=full_env, stdout=out, stderr=subprocess.STDOUT)
    up = Up(process, run_dir, full_env, output)
    try:
        deadline = time.monotonic() + ready_s
        while not (run_dir / "state.json").exists():
            assert process.poll() is None, up.text()
            assert time.monotonic() < deadline, "kevolve up never reported ready"
            time.sleep(0.2)
        yield up
    finally:
        children = psutil.Process(process.pid).children(recursive=True) if process.poll() is None else []
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                process.kill()
        _, alive = psutil.wait_procs(children, timeout=30)
        for child in alive:   # a failed assertion must not leave servers behind
            child.kill()
