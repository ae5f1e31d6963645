"""`kevolve up`: the whole system on one machine, each service its own process.

An embedded nats-server (JetStream, free port, store under the run dir), SQLite and a local
object store, then the five services started exactly as Kubernetes starts them
(`python -m services.<name>` against a NATS URL). A service that dies is restarted, so a
crash loses no accepted work: its unacked message comes back from JetStream.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kevolve.config import REPO_ROOT
from kevolve.natsd import NatsServer, start_nats

STATE_FILE = "state.json"


@dataclass
class ServiceProcess:
    name: str
    args: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0

    def start(self) -> None:
        log = open(self.log_path, "ab")
        # Own process group: a Ctrl-C in the terminal reaches the launcher, which stops
        # the services in order instead of all of them dying mid-message.
        self.process = subprocess.Popen(self.args, env=self.env, cwd=REPO_ROOT, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        log.close()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        if not self.alive():
            return
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@dataclass
class LocalSystem:
    run_dir: Path
    nats: NatsServer
    services: list[ServiceProcess] = field(default_factory=list)
    grpc_target: str = ""

    def state(self) -> dict[str, object]:
        return {"grpc_target": self.grpc_target, "nats_url": self.nats.url, "run_dir": str(self.run_dir),
                "pid": os.getpid(), "objects": str(self.run_dir / "objects")}

    def supervise_once(self) -> list[str]:
        """Restart services that died; return the names restarted."""
        restarted = []
        for svc in self.services:
            if not svc.alive():
                svc.restarts += 1
                svc.start()
                restarted.append(svc.name)
        return restarted

    def stop(self) -> None:
        # Controller last: results still arriving from workers are recorded until the end.
        for svc in sorted(self.services, key=lambda s: s.name == "controller"):
            svc.stop()
        self.nats.stop()
        (self.run_dir / STATE_FILE).unlink(missing_ok=True)


def base_env(run_dir: Path, nats_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEVOLVE_")}
    env.update(
        KEVOLVE_NATS_URL=nats_url,
        KEVOLVE_OBJECTS_URL=str(run_dir / "objects"),
        KEVOLVE_CONTROLLER_DATABASE_URL=f"sqlite:///{run_dir / 'kevolve.db'}",
        PYTHONPATH=str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        PYTHONUNBUFFERED="1",
    )
    # Pass through the user's own settings (LLM endpoint, tokens, ...) untouched.
    env.update({k: v for k, v in os.environ.items() if k.startswith("KEVOLVE_") and k not in env})
    return env


def start_system(run_dir: Path, platforms: tuple[str, ...] = ("cpu",), grpc_port: int = 0,
                 timeout_s: float = 60.0, extra_env: dict[str, str] | None = None) -> LocalSystem:
    run_dir = run_dir.resolve()
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    nats = start_nats(run_dir / "nats", log_file=run_dir / "logs" / "nats.log")
    system = LocalSystem(run_dir=run_dir, nats=nats)
    env = {**base_env(run_dir, nats.url), **(extra_env or {})}
    port_file = run_dir / "controller.port"
    port_file.unlink(missing_ok=True)
    py = sys.executable

    def add(name: str, module: str, extra: dict[str, str]) -> None:
        system.services.append(ServiceProcess(name, [py, "-m", module], {**env, **extra},
                                              run_dir / "logs" / f"{name}.log"))

    add("controller", "services.controller", {"KEVOLVE_CONTROLLER_GRPC_PORT": str(grpc_port),
                                              "KEVOLVE_CONTROLLER_PORT_FILE": str(port_file)})
    add("retriever", "services.retriever", {})
    add("generator", "services.generator", {})
    # Every platform gets its pool; a GPU platform is screened on the cpu pool first.
    pools = list(dict.fromkeys(["cpu", *platforms]))
    for platform in pools:
        add(f"evaluator-{platform}", "services.evaluator", {"KEVOLVE_EVALUATOR_PLATFORM": platform})
        add(f"profiler-{platform}", "services.profiler", {"KEVOLVE_PROFILER_PLATFORM": platform})
    for svc in system.services:
        svc.start()
    deadline = time.monotonic() + timeout_s
    while not port_file.exists() or not port_file.read_text().strip():
        controller = system.services[0]
        if not controller.alive():
            log_tail = controller.log_path.read_text()[-3000:]
            system.stop()
            raise RuntimeError(f"controller exited during start-up; its log ends:\n{log_tail}")
        if time.monotonic() > deadline:
            system.stop()
            raise TimeoutError(f"controller did not report its gRPC port within {timeout_s}s")
        time.sleep(0.1)
    system.grpc_target = f"127.0.0.1:{int(port_file.read_text().strip())}"
    (run_dir / STATE_FILE).write_text(json.dumps(system.state(), indent=2))
    return system


def find_running(run_dir: Path) -> dict[str, object] | None:
    path = run_dir / STATE_FILE
    if not path.exists():
        return None
    state = json.loads(path.read_text())
    try:
        os.kill(int(state["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return None
    return state
