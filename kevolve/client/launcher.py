"""`kevolve up`: the whole system on one machine, each service its own process.

An embedded nats-server (JetStream, free port, store under the run dir), SQLite and a local
object store, then the five services started exactly as Kubernetes starts them
(`python -m services.<name>` against a NATS URL), each with only its own settings
(``serviceenv``). Whatever dies is restarted, nats-server included (on its port, with its
store, so JetStream keeps the accepted work), and said so: at once the first time, then
with a doubling delay while it keeps dying. A crashed service loses no accepted work: its
unacked message comes back from JetStream.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kevolve.client.serviceenv import service_env
from kevolve.config import EXIT_CONFIG, REPO_ROOT
from kevolve.platforms import load_platforms
from kevolve.client.natsd import NatsServer, start_nats
from services.controller.config import is_loopback, parse_tokens

STATE_FILE = "state.json"


def _tail(path: Path, lines: int = 20) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return []
DEFAULT_HOST = "127.0.0.1"


@dataclass
class Backoff:
    """Delays between restarts of something that keeps dying."""

    first_s: float = 1.0
    max_s: float = 30.0
    # A process that lived this long was healthy: its next death is restarted at once again.
    stable_s: float = 60.0
    failures: int = 0

    def after_death(self, lived_s: float) -> float:
        if lived_s >= self.stable_s:
            self.failures = 0
        self.failures += 1
        return 0.0 if self.failures == 1 else min(self.max_s, self.first_s * 2 ** (self.failures - 2))


@dataclass(frozen=True)
class Event:
    """Something the supervisor did, for `up`'s output and logs/up.log."""

    name: str
    message: str
    fatal: bool = False   # the system cannot run as configured: `up` stops


@dataclass
class ServiceProcess:
    name: str
    args: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    started_at: float = 0.0
    restart_at: float | None = None
    backoff: Backoff = field(default_factory=Backoff)

    def start(self) -> None:
        log = open(self.log_path, "ab")
        # Own process group: a Ctrl-C in the terminal reaches the launcher, which stops
        # the services in order instead of all of them dying mid-message.
        self.process = subprocess.Popen(self.args, env=self.env, cwd=REPO_ROOT, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.started_at = time.monotonic()
        self.restart_at = None

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
    grpc_host: str = DEFAULT_HOST
    nats_started_at: float = field(default_factory=time.monotonic)
    nats_restart_at: float | None = None
    nats_backoff: Backoff = field(default_factory=Backoff)

    @property
    def port_file(self) -> Path:
        return self.run_dir / "controller.port"

    def state(self) -> dict[str, object]:
        return {"grpc_target": self.grpc_target, "nats_url": self.nats.url, "run_dir": str(self.run_dir),
                "pid": os.getpid(), "objects": str(self.run_dir / "objects")}

    def write_state(self) -> None:
        path = self.run_dir / STATE_FILE
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.state(), indent=2))
        os.replace(tmp, path)   # a CLI call never reads a half-written file

    def supervise_once(self) -> list[Event]:
        """Restart what died (when its backoff allows) and follow the controller's port."""
        events = self._supervise_nats()
        for svc in self.services:
            events += self._supervise(svc)
        events += self._follow_controller_port()
        if events:
            with open(self.run_dir / "logs" / "up.log", "a") as log:
                for event in events:
                    log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {event.message}\n")
        return events

    def _supervise(self, svc: ServiceProcess) -> list[Event]:
        now = time.monotonic()
        if svc.alive():
            return []
        code = svc.process.returncode if svc.process is not None else None
        if code == EXIT_CONFIG:
            # Restarting would fail the same way: say which variable is wrong and stop.
            why = "; ".join(line.strip() for line in _tail(svc.log_path) if "invalid setting" in line)
            return [Event(svc.name, f"{svc.name} cannot start: {why or 'invalid settings'} "
                                    f"(see {svc.log_path})", fatal=True)]
        if svc.restart_at is None:
            delay = svc.backoff.after_death(now - svc.started_at)
            svc.restart_at = now + delay
            if delay:
                return [Event(svc.name, f"{svc.name} exited with code {code} ({svc.backoff.failures} times in a "
                                        f"row); restarting it in {delay:g}s (see {svc.log_path})")]
            svc.restarts += 1
            svc.start()
            return [Event(svc.name, f"{svc.name} exited with code {code}; restarted it (see {svc.log_path})")]
        if now >= svc.restart_at:
            svc.restarts += 1
            svc.start()
            return [Event(svc.name, f"restarted {svc.name} (see {svc.log_path})")]
        return []

    def _supervise_nats(self) -> list[Event]:
        now = time.monotonic()
        if self.nats.process.poll() is None:
            return []
        log_path = self.run_dir / "logs" / "nats.log"
        events = []
        if self.nats_restart_at is None:
            delay = self.nats_backoff.after_death(now - self.nats_started_at)
            self.nats_restart_at = now + delay
            events.append(Event("nats-server", f"nats-server exited with code {self.nats.process.returncode}; "
                                               f"restarting it on port {self.nats.port} with its store "
                                               f"{self.nats.store_dir}" + (f" in {delay:g}s" if delay else "")
                                               + f" (see {log_path})"))
        if now < self.nats_restart_at:
            return events
        try:
            # The same port (every service's URL) and store (the stream and its unacked work).
            self.nats = start_nats(self.nats.store_dir, port=self.nats.port, log_file=log_path)
        except (RuntimeError, TimeoutError, OSError) as exc:
            self.nats_started_at = time.monotonic()
            self.nats_restart_at = None
            return [*events, Event("nats-server", f"nats-server did not restart: {exc} (see {log_path})")]
        self.nats_started_at = time.monotonic()
        self.nats_restart_at = None
        return [*events, Event("nats-server", f"restarted nats-server on port {self.nats.port}; "
                                              "the services reconnect on their own")]

    def _follow_controller_port(self) -> list[Event]:
        try:
            port = int(self.port_file.read_text().strip())
        except (OSError, ValueError):
            return []
        target = f"{connect_host(self.grpc_host)}:{port}"
        if target == self.grpc_target:
            return []
        self.grpc_target = target
        self.write_state()
        return [Event("controller", f"the controller now serves on {target}")]

    def stop(self) -> None:
        # Controller last: results still arriving from workers are recorded until the end.
        for svc in sorted(self.services, key=lambda s: s.name == "controller"):
            svc.stop()
        self.nats.stop()
        (self.run_dir / STATE_FILE).unlink(missing_ok=True)


def connect_host(bind_host: str) -> str:
    """Where a client on this machine reaches a server bound to ``bind_host``."""
    if bind_host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if bind_host in ("::", "[::]"):
        return "[::1]"
    if ":" in bind_host and not bind_host.startswith("["):
        return f"[{bind_host}]"
    return bind_host


def exposure_error(host: str, environ: Mapping[str, str], insecure_open: bool) -> str | None:
    """Why serving the API on ``host`` is refused, or None.

    Off the loopback interface an open API lets anyone who reaches it submit code, so it
    needs tenant tokens or an explicit --insecure-open.
    """
    if is_loopback(host) or insecure_open:
        return None
    try:
        tokens = parse_tokens(environ.get("KEVOLVE_CONTROLLER_TOKENS", ""))
    except ValueError as exc:
        return str(exc)
    if tokens:
        return None
    return (f"refusing to serve the API on {host} without authentication: set tenant tokens "
            f"(KEVOLVE_CONTROLLER_TOKENS='token=tenant,...') or pass --insecure-open")


def visible_gpus(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The GPUs this host lets the system use: CUDA_VISIBLE_DEVICES's entries when it is set
    (an empty value or -1: none), else every GPU nvidia-smi lists; none when neither says."""
    if "CUDA_VISIBLE_DEVICES" in environ:
        entries = tuple(e.strip() for e in environ["CUDA_VISIBLE_DEVICES"].split(",") if e.strip())
        # CUDA stops reading the list at the first invalid entry, so "-1" hides every GPU.
        return () if not entries or entries[0] == "-1" else entries
    try:
        listed = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(line.strip() for line in listed.splitlines() if line.strip().isdigit())


@dataclass(frozen=True)
class PoolWorker:
    """One evaluator process of a pool: its name and, on a GPU platform, the GPU it owns."""

    name: str
    platform: str
    gpu: str | None = None


def pool_workers(platforms: tuple[str, ...], gpus: tuple[str, ...], gpu_workers: int,
                 pins_gpus: Mapping[str, bool]) -> list[PoolWorker]:
    """The evaluator processes of every pool. The cpu pool gets one; a platform whose
    candidates run on a CUDA device gets ``gpu_workers`` per GPU in ``gpus``, each pinned to its
    GPU through CUDA_VISIBLE_DEVICES (so it times under that GPU's own lock, keeps baselines
    per GPU and never shares a device it was not given); with no GPUs named, ``gpu_workers``
    unpinned ones. Names stay as before on one GPU and gain the GPU's index on several."""
    workers: list[PoolWorker] = []
    for platform in dict.fromkeys(["cpu", *platforms]):
        if platform == "cpu":
            workers.append(PoolWorker(f"evaluator-{platform}", platform))
            continue
        devices: tuple[str | None, ...] = gpus if gpus and pins_gpus.get(platform, False) else (None,)
        for gpu in devices:
            base = f"evaluator-{platform}" + (f"-gpu{gpu}" if len(devices) > 1 else "")
            for i in range(gpu_workers):
                workers.append(PoolWorker(base + (f"-{i + 1}" if i else ""), platform, gpu))
    return workers


def screened_workers(workers: list[PoolWorker], screen_on: Mapping[str, str]) -> dict[str, int]:
    """For each pool that screens others' candidates, how many of this host's evaluator workers
    it screens for: its evaluators size their slots from it (``KEVOLVE_EVALUATOR_SCREENS_FOR``,
    the evaluator's own setting), every candidate of those workers passing through it first."""
    screened: dict[str, int] = {}
    for worker in workers:
        if screen_on.get(worker.platform):
            screened[screen_on[worker.platform]] = screened.get(screen_on[worker.platform], 0) + 1
    return screened


def start_system(run_dir: Path, platforms: tuple[str, ...] = ("cpu",), grpc_port: int = 0,
                 timeout_s: float = 60.0, extra_env: dict[str, str] | None = None,
                 grpc_host: str = DEFAULT_HOST, gpu_workers: int = 1,
                 gpus: tuple[str, ...] = (), generators: int = 1) -> LocalSystem:
    run_dir = run_dir.resolve()
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    nats = start_nats(run_dir / "nats", log_file=run_dir / "logs" / "nats.log")
    system = LocalSystem(run_dir=run_dir, nats=nats, grpc_host=grpc_host)
    source = {**os.environ, **(extra_env or {})}
    # What this run decides; each value still reaches only the services it belongs to.
    source.update(KEVOLVE_NATS_URL=nats.url, KEVOLVE_OBJECTS_URL=str(run_dir / "objects"),
                  KEVOLVE_CONTROLLER_DATABASE_URL=f"sqlite:///{run_dir / 'kevolve.db'}")
    # Metrics listeners (off unless a port is set) stay on the API's interface unless told.
    source.setdefault("KEVOLVE_METRICS_HOST", DEFAULT_HOST if is_loopback(grpc_host) else grpc_host)
    system.port_file.unlink(missing_ok=True)
    py = sys.executable
    table = load_platforms(REPO_ROOT / "kb")
    pins = {name: p.runner == "cuda" for name, p in table.items()}

    def gpu_pool(extra: dict[str, str]) -> bool:
        """An evaluator or profiler of a pool whose candidates run on a GPU."""
        platform = extra.get("KEVOLVE_EVALUATOR_PLATFORM") or extra.get("KEVOLVE_PROFILER_PLATFORM", "")
        return pins.get(platform, False)

    def add(name: str, service: str, extra: dict[str, str]) -> None:
        env = service_env(service, {**source, **extra})
        if "CUDA_VISIBLE_DEVICES" not in extra and not gpu_pool(extra):
            # No GPU for what needs none (the controller, retriever, generator, cpu pools): a
            # library that finds one can take its memory (JAX, imported by bm25s, takes 75%
            # of it), and code run on the cpu pool has no business on a GPU.
            env["CUDA_VISIBLE_DEVICES"] = ""
        system.services.append(ServiceProcess(name, [py, "-m", f"services.{service}"], env,
                                              run_dir / "logs" / f"{name}.log"))

    add("controller", "controller", {"KEVOLVE_CONTROLLER_GRPC_PORT": str(grpc_port),
                                     "KEVOLVE_CONTROLLER_GRPC_HOST": grpc_host,
                                     "KEVOLVE_CONTROLLER_PORT_FILE": str(system.port_file)})
    add("retriever", "retriever", {})
    # Each service that runs user code works in its own directory of this run: two systems on
    # one host (or two pools of one system) never share sandboxes, caches or warm workers.
    scratch = run_dir / "scratch"
    # Generator replicas share its work queue as Kubernetes replicas do: each traces specs in
    # sandboxed children but lowers them on one core of its own, so a host running many jobs
    # at once (a benchmark of 48 on four GPUs left jobs with no first draft in 400 s behind
    # one generator) needs several.
    for i in range(generators):
        name = "generator" + (f"-{i + 1}" if i else "")
        add(name, "generator", {"KEVOLVE_GENERATOR_SCRATCH_DIR": str(scratch / name)})
    # Every platform gets its pool; a GPU platform is screened on the cpu pool first.
    # A GPU pool runs its workers on every GPU it is given (each its own scratch and warm
    # workers); the GPU lock, shared through the host's lock directory, times one candidate
    # at a time on each GPU.
    workers = pool_workers(tuple(platforms), gpus, gpu_workers, pins)
    screening = screened_workers(workers, {name: p.screen_on for name, p in table.items()})
    for worker in workers:
        pinned = {"CUDA_VISIBLE_DEVICES": worker.gpu} if worker.gpu is not None else {}
        if worker.platform in screening:
            pinned["KEVOLVE_EVALUATOR_SCREENS_FOR"] = str(screening[worker.platform])
        add(worker.name, "evaluator", {"KEVOLVE_EVALUATOR_PLATFORM": worker.platform,
                                       "KEVOLVE_EVALUATOR_SCRATCH_DIR": str(scratch / worker.name), **pinned})
    for platform in dict.fromkeys(["cpu", *platforms]):
        # One profiler per pool: profiles are few (asked for per job), so it shares the first
        # GPU with that GPU's evaluators, under its lock.
        first = gpus[0] if gpus and pins.get(platform, False) else None
        add(f"profiler-{platform}", "profiler", {"KEVOLVE_PROFILER_PLATFORM": platform,
                                                 "KEVOLVE_PROFILER_SCRATCH_DIR": str(scratch / f"profiler-{platform}"),
                                                 **({"CUDA_VISIBLE_DEVICES": first} if first is not None else {})})
    for svc in system.services:
        svc.start()
    controller = system.services[0]
    deadline = time.monotonic() + timeout_s
    while not system.port_file.exists() or not system.port_file.read_text().strip():
        if not controller.alive():
            log_tail = controller.log_path.read_text()[-3000:]
            system.stop()
            raise RuntimeError(f"controller exited during start-up; its log ends:\n{log_tail}")
        if time.monotonic() > deadline:
            system.stop()
            raise TimeoutError(f"controller did not report its gRPC port within {timeout_s}s")
        time.sleep(0.1)
    port = int(system.port_file.read_text().strip())
    # A restarted controller binds the port this one got (even under --port 0), so clients
    # and state.json keep working across its restarts.
    controller.env["KEVOLVE_CONTROLLER_GRPC_PORT"] = str(port)
    system.grpc_target = f"{connect_host(grpc_host)}:{port}"
    system.write_state()
    return system


def find_running(run_dir: Path) -> dict[str, object] | None:
    path = run_dir / STATE_FILE
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text())
        os.kill(int(state["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return dict(state)
