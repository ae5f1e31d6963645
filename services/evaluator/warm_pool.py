"""The trusted side of the zygote (services/evaluator/sandboxed/zygote.py): start it, ask it to run
children, and fall back to killing it when it stops answering."""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import structlog

from kevolve.exec import sandbox

log = structlog.get_logger("evaluator.warm_pool")

START_TIMEOUT_S = 300.0
GRACE_S = 20.0  # beyond a child's own deadline before the zygote itself is presumed stuck
WAIT_SLICE_S = 0.5


class ZygoteDied(RuntimeError):
    pass


class WarmPool:
    def __init__(
        self, root: Path, env: dict[str, str], writable: list[Path], isolation: sandbox.Isolation,
        gpu: bool = False, max_file_mb: int = sandbox.Limits.max_file_mb,
    ) -> None:
        self.root = root
        self.max_file_mb = max_file_mb  # every child inherits the zygote's file-size limit
        self.gpu = gpu  # a GPU pool's zygote: CUDA device nodes in its view, GPU imports warmed
        self.env = env
        self.writable = writable
        self.isolation = isolation
        self.mode = ""
        self._proc: Any = None
        self._lock = threading.Lock()
        self._waiters: dict[str, tuple[threading.Event, dict[str, Any]]] = {}
        self._ready = threading.Event()

    def _start(self) -> None:
        self._ready.clear()
        limits = sandbox.Limits(timeout_s=0, memory_mb=0, address_space=False, max_procs=4096, gpu=self.gpu,
                                max_file_mb=self.max_file_mb)
        argv = [sys.executable, "-m", "services.evaluator.sandboxed.zygote", *(["cuda"] if self.gpu else [])]
        self._proc, self.mode = sandbox.spawn(
            argv,
            scratch=self.root,
            limits=limits,
            env={**self.env, "PYTHONPATH": sandbox.child_pythonpath()},
            writable=self.writable,
            isolation=self.isolation,
            stderr_path=self.root / "zygote.stderr",
        )
        threading.Thread(target=self._read, args=(self._proc,), daemon=True).start()
        if not self._ready.wait(START_TIMEOUT_S) or self._proc.poll() is not None:
            self.stop()
            raise ZygoteDied("the warm pool's zygote did not start (see zygote.stderr)")
        log.info("warm pool ready", sandbox=self.mode)

    def _read(self, proc: Any) -> None:
        for raw in proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if msg.get("ready"):
                self._ready.set()
                continue
            waiter = self._waiters.get(msg.get("id", ""))
            if waiter:
                waiter[1].update(msg)
                waiter[0].set()
        for event, _ in list(self._waiters.values()):  # the zygote is gone: wake everyone
            event.set()

    def stop(self) -> None:
        if self._proc is not None:
            sandbox.kill_group(self._proc)
            self._proc.wait()
            self._proc = None

    def _send(self, message: dict[str, Any]) -> None:
        self._proc.stdin.write((json.dumps(message) + "\n").encode())
        self._proc.stdin.flush()

    def run(self, mode: str, work: Path, limits: sandbox.Limits,
            grace: sandbox.Grace | None = None) -> sandbox.SandboxResult:
        """Run one child; ``grace`` (seconds its caller adds while it runs: a GPU pool's queue
        for the timing lock) extends its deadline in the zygote as it grows, as
        ``sandbox.run`` does for a fresh process."""
        req_id = uuid.uuid4().hex
        event, reply = threading.Event(), {}
        self._waiters[req_id] = (event, reply)
        started = time.perf_counter()
        try:
            with self._lock:
                if self._proc is None or self._proc.poll() is not None:
                    self._start()
                self._send({
                    "id": req_id,
                    "mode": mode,
                    "plan": str(work / "plan.json"),
                    "timeout_s": limits.timeout_s,
                    "memory_mb": limits.memory_mb,
                    "max_procs": limits.max_procs,
                    "address_space": limits.address_space,
                })
            sent, granted = time.perf_counter(), 0.0
            while not event.wait(WAIT_SLICE_S):
                extra = grace.total() if grace else 0.0
                if extra - granted > WAIT_SLICE_S:
                    # Only the worker can extend a deadline: it is told through the zygote's
                    # stdin, never through the child's writable scratch.
                    granted = extra
                    with self._lock:
                        if self._proc is not None and self._proc.poll() is None:
                            self._send({"id": req_id, "grace_s": granted})
                if time.perf_counter() - sent > limits.timeout_s + extra + GRACE_S:
                    break
            if not event.is_set() or not reply:
                # No answer: the zygote is stuck or dead. Replace it; the child dies with it.
                log.warning("zygote did not answer; restarting it", request=req_id)
                with self._lock:
                    self.stop()
                reply = {"killed_for": "timeout", "returncode": None, "signal": None}
        finally:
            self._waiters.pop(req_id, None)
        if reply.get("killed_for") == "fork":
            # The forked child never started, so the candidate never ran: not its failure.
            raise ZygoteDied("a child forked by the warm pool never started")
        out, err = work / ".sandbox.stdout", work / ".sandbox.stderr"
        return sandbox.SandboxResult(
            returncode=reply.get("returncode"),
            signal=reply.get("signal"),
            killed_for=reply.get("killed_for", ""),
            stdout=_tail(out),
            stderr=_tail(err),
            duration_s=time.perf_counter() - started,
            mode=f"{self.mode} (warm pool)",
            peak_rss_mb=float(reply.get("peak_rss_mb", 0.0)),
        )


def _tail(path: Path, limit: int = 20_000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")
