"""A warm process that forks one child per candidate, so candidates skip importing torch.

Importing torch and Triton costs seconds of CPU; the cpu pool evaluates many small
candidates, so that cost dominated. The zygote imports them once, inside the same sandbox a
fresh child would get (bubblewrap: no network, read-only filesystem, the reference cache
hidden), and forks per request. Each forked child gets its own session (process group),
its own rlimits, a wall-clock deadline and a memory/process watchdog, exactly like
``kevolve.exec.sandbox.run``; the zygote never runs candidate code itself.

Protocol (JSON lines): stdin ``{"id", "mode", "plan", "timeout_s", "memory_mb", "max_procs",
"address_space"}`` to run a child, ``{"id", "grace_s"}`` to extend a running child's deadline;
stdout ``{"id", "returncode", "signal", "killed_for", "duration_s", "peak_rss_mb"}``, where
``killed_for`` "fork" means the child never started (see ``_serve``).

GPU pools (``zygote cuda``): a CUDA context does not survive fork, so the zygote never creates
one. It imports torch, Triton, TorchDynamo/Inductor (the torch.compile baseline) and the CUDA
timer, checks that CUDA is still uninitialised, and each forked candidate starts its own
context: a CUDA error still never outlives its candidate, and candidates skip seconds of
imports. ``PYTORCH_NVML_BASED_CUDA_CHECK`` (set by the worker) keeps availability checks
made during those imports from initialising the driver.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import torch
import triton
import triton.language  # noqa: F401

from kevolve.exec import interp_compat

from . import child, guards, inputs  # noqa: F401 - warm imports for the forked children
from .platforms import cpu  # noqa: F401

_OUT = threading.Lock()
_FORK_LOCK = threading.Lock()
POLL_S = 0.05
FORK_START_S = 10.0
_CHILDREN: set[int] = set()
# Seconds the worker added to a running request's deadline (its wait for the GPU lock), by id.
_GRACE: dict[str, float] = {}
_CHILDREN_LOCK = threading.Lock()
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)


def _reply(message: dict[str, Any]) -> None:
    with _OUT:
        sys.__stdout__.write(json.dumps(message) + "\n")
        sys.__stdout__.flush()


def _child(req: dict[str, Any]) -> None:
    """In the forked child: contain, redirect, run, never return."""
    try:
        os.setsid()
        # Dies with the zygote's serving thread (which waits for it), so a killed evaluator
        # leaves no candidate behind, whatever becomes of the zygote.
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # The budget is on top of what the zygote already maps (torch, Triton): the child
        # inherits those mappings, and the watchdog below caps resident memory anyway.
        if req.get("address_space", True):  # not on CUDA: the driver maps far more than it uses
            mem = int(req["memory_mb"]) * 2**20 + psutil.Process().memory_info().vms
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        plan = Path(req["plan"])
        os.chdir(plan.parent)
        for fd, name in ((1, ".sandbox.stdout"), (2, ".sandbox.stderr")):
            target = os.open(plan.parent / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        # Fresh stream objects: a lock held by another zygote thread at fork time stays held.
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        child.run_mode(str(req["mode"]), plan)
    finally:
        os._exit(0)


def _serve(req: dict[str, Any]) -> None:
    started = time.monotonic()
    with _FORK_LOCK:  # one fork at a time: a child is a copy of the zygote at one quiet moment
        pid = os.fork()
        if pid == 0:
            _child(req)
    with _CHILDREN_LOCK:
        _CHILDREN.add(pid)
    killed_for, peak, status = "", 0.0, 0
    own_group = False
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if not own_group:
            # The child's first act (setsid) makes it the leader of a process group of its
            # own. One that is not after FORK_START_S is stuck in the fork itself (a lock
            # another zygote thread held at that instant, in an after-fork handler): it never
            # loaded the candidate, so the worker is told "fork" and runs the candidate in a
            # fresh process instead.
            try:
                own_group = os.getpgid(pid) == pid
            except ProcessLookupError:
                own_group = True  # gone already: waitpid above reaps it next round
        try:
            procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
            rss = sum(p.memory_info().rss for p in procs)
        except psutil.Error:
            procs, rss = [], 0
        peak = max(peak, rss / 2**20)
        if not own_group and time.monotonic() - started > FORK_START_S:
            killed_for = "fork"
        elif time.monotonic() > started + float(req["timeout_s"]) + _GRACE.get(req["id"], 0.0):
            killed_for = "timeout"
        elif len(procs) > int(req["max_procs"]):
            killed_for = "procs"
        elif rss > int(req["memory_mb"]) * 2**20:
            killed_for = "memory"
        if killed_for:
            _kill(pid)
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(POLL_S)
    _kill(pid)  # whatever the child left in its group dies with it
    with _CHILDREN_LOCK:
        _CHILDREN.discard(pid)
    _GRACE.pop(req["id"], None)
    _reply(
        {
            "id": req["id"],
            "returncode": os.waitstatus_to_exitcode(status) if not killed_for else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "killed_for": killed_for,
            "duration_s": time.monotonic() - started,
            "peak_rss_mb": peak,
        }
    )


def _kill(pid: int) -> None:
    """The child's whole group, and the child itself (which is in no group of its own if it
    never got past the fork)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _warm_gpu_imports() -> None:
    """What a GPU candidate would import anyway, imported once here; CUDA stays uninitialised
    (a context made before fork would be unusable in every child)."""
    import torch._dynamo  # noqa: F401 - torch.compile baseline
    import torch._inductor.compile_fx  # noqa: F401

    from .platforms import cuda  # noqa: F401

    if torch.cuda.is_initialized():
        raise RuntimeError("CUDA was initialised while warming the zygote; forked children could not use it")


def main() -> None:
    if sys.argv[1:] == ["cuda"]:
        _warm_gpu_imports()
    interp_compat.apply()  # forked candidates inherit the patched interpreter
    torch.set_num_threads(1)  # no OpenMP pool in the zygote: forking after one starts deadlocks
    _reply({"id": "", "ready": True})
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if "grace_s" in req:  # the worker extends a running request's deadline
            _GRACE[str(req.get("id", ""))] = float(req["grace_s"])
            continue
        threading.Thread(target=_serve, args=(req,), daemon=True).start()
    # stdin closed: the evaluator is gone (or stopping the pool). Take every running candidate
    # along and leave at once, without waiting for interpreter teardown.
    with _CHILDREN_LOCK:
        for pid in _CHILDREN:
            _kill(pid)
    os._exit(0)


if __name__ == "__main__":
    main()
