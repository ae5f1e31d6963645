"""A warm process that forks one child per candidate, so candidates skip importing torch.

Importing torch and Triton costs seconds of CPU; the cpu pool evaluates many small
candidates, so that cost dominated. The zygote imports them once (and TorchDynamo, which the
guards' dispatch mode would import in every candidate's first forward: ``warm_imports``), inside the same sandbox a
fresh child would get (bubblewrap: no network, read-only filesystem, the reference cache
hidden), and forks per request. Each forked child gets its own session (process group),
its own rlimits, a wall-clock deadline and a memory/process watchdog, exactly like
``kevolve.exec.sandbox.run``; the zygote never runs candidate code itself.

On a GPU pool a child is forked ahead of its request (a *spare*, one at a time): it takes
its own session and starts its CUDA context (0.3 s of an H100 evaluation's critical path),
then waits for a request on a pipe; from then on it is any other child. A spare that does not
start within ``FORK_START_S`` is killed and another forked; a request that finds none ready
forks one of its own, as before. A spare is forked as a request comes, and the next request is
most often a candidate of the same job: so it also builds that request's baselines ahead
(``ahead.py``: the reference model and its torch.compile, about a second of every
evaluation), and says first which spec it loads. A request of another spec never runs in it:
the spare is retired and the request gets a fresh child. A spare still building after
``AHEAD_S`` is retired the same way.

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
import select
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import torch
import triton
import triton.language  # noqa: F401

from kevolve.exec import interp_compat

from ..protocol import SPEC_FILE
from . import ahead, child, guards, inputs  # noqa: F401 - warm imports for the forked children
from .platforms import cpu  # noqa: F401

_OUT = threading.Lock()
_FORK_LOCK = threading.Lock()
POLL_S = 0.05
FORK_START_S = 10.0
# How long a request waits for a spare to finish building its baselines ahead (a warm
# torch.compile: about a second) before it is given a fresh child instead.
AHEAD_S = 30.0
DIGEST_CHARS = 64  # ahead.spec_digest: SHA-256 in hex
_CHILDREN: set[int] = set()
# Seconds the worker added to a running request's deadline (its wait for the GPU lock), by id.
_GRACE: dict[str, float] = {}
_CHILDREN_LOCK = threading.Lock()
_PR_SET_PDEATHSIG = 1
_GPU = False  # a GPU pool's zygote: spares start their CUDA context before their request
_LIBC = ctypes.CDLL(None, use_errno=True)


def _reply(message: dict[str, Any]) -> None:
    with _OUT:
        sys.__stdout__.write(json.dumps(message) + "\n")
        sys.__stdout__.flush()


def _contain() -> None:
    """A forked child's first acts: a session of its own, death with the thread that forked
    it (a serving thread that waits for it, or the spare keeper, which lives as long as the
    zygote), so a killed evaluator leaves no candidate behind, and no core dumps."""
    os.setsid()
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _child(req: dict[str, Any]) -> None:
    """In the forked child: contain, redirect, run, never return."""
    try:
        _contain()
        _run(req)
    finally:
        os._exit(0)


def _run(req: dict[str, Any]) -> None:
    """The request's part of a child, in its own session already: limits, scratch, run."""
    # The budget is on top of what the zygote already maps (torch, Triton): the child
    # inherits those mappings, and the watchdog below caps resident memory anyway.
    if req.get("address_space", True):  # not on CUDA: the driver maps far more than it uses
        mem = int(req["memory_mb"]) * 2**20 + psutil.Process().memory_info().vms
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    plan = Path(req["plan"])
    os.chdir(plan.parent)
    _redirect(plan.parent / ".sandbox.stdout", plan.parent / ".sandbox.stderr")
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    child.run_mode(str(req["mode"]), plan)


def _redirect(stdout: Path | str, stderr: Path | str) -> None:
    """This process's stdout and stderr into these files (truncated), with fresh stream
    objects: a lock another zygote thread held at fork time stays held in the old ones."""
    for fd, path in ((1, stdout), (2, stderr)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115


@dataclass
class _Spare:
    pid: int
    requests: int  # write end of the pipe the spare reads its request from
    ready: int  # read end of the pipe it reports on: b"w" once its baselines are built
    spec: str  # digest of the spec whose baselines it builds ahead ("": none, it ran no spec code)


_SPARE: _Spare | None = None
_PRIVATE_FDS: set[int] = set()  # the zygote's ends of spare pipes (changed under _FORK_LOCK)
_SPARE_LOCK = threading.Lock()
_SPARE_TAKEN = threading.Event()
# The plan of the last request whose baselines a spare builds ahead (a candidate's or a job's
# baselines run, on a GPU pool): the next spare is forked for a request of the same job.
_HINT = ""


def _spare_child(requests: int, ready: int, hint: str) -> None:
    """In a child forked ahead of its request: contain, start the device, say so, build the
    baselines of ``hint``'s spec (ahead.py), say so, wait."""
    try:
        _contain()
        # Nothing a spec prints reaches the zygote's replies: stdout and stderr are
        # redirected to the request's own files once it comes.
        _redirect(os.devnull, os.devnull)
        if _GPU:
            torch.zeros(1, device="cuda")  # this process's own CUDA context, made now
        source = _read_spec(hint) if hint else None
        # The digest of exactly what it is about to run, before running any of it: the
        # zygote gives this spare no request of another spec.
        digest = ahead.spec_digest(source) if source is not None else "-" * DIGEST_CHARS
        os.write(ready, b"1" + digest.encode())  # one write of a fixed size: read whole
        if source is not None:
            try:
                child.build_ahead(Path(hint), source)
            except BaseException:  # noqa: BLE001 - the request builds its own baselines then
                pass
        os.write(ready, b"w")
        os.close(ready)
        data = b""
        while not data.endswith(b"\n") and (chunk := os.read(requests, 1 << 16)):
            data += chunk
        os.close(requests)
        if data.endswith(b"\n"):  # else the zygote retired this spare
            child.STARTED_AT = time.monotonic()
            _run(json.loads(data))
    finally:
        os._exit(0)


def _read_spec(plan: str) -> bytes | None:
    try:
        return (Path(plan).parent / SPEC_FILE).read_bytes()
    except OSError:  # the run is gone already: nothing to build ahead
        return None


def _forked() -> None:
    """In every child, first: close the zygote's ends of its spares' pipes. A child never
    holds them: a candidate could write a request of its own choosing to the next spare."""
    for fd in _PRIVATE_FDS:
        try:
            os.close(fd)
        except OSError:
            pass


def _close_private(fd: int) -> None:
    with _FORK_LOCK:  # out of the set before the number can be reused: no child closes another file
        _PRIVATE_FDS.discard(fd)
        os.close(fd)


def _fork_spare() -> _Spare | None:
    """A spare that has started, or None (it did not within FORK_START_S: killed)."""
    with _FORK_LOCK:
        hint = _HINT
        requests_r, requests_w = os.pipe()
        ready_r, ready_w = os.pipe()
        _PRIVATE_FDS.update((requests_w, ready_r))
        pid = os.fork()
        if pid == 0:
            try:
                _forked()
                _spare_child(requests_r, ready_w, hint)
            finally:
                os._exit(0)  # never back into the zygote's own code
        # The spare's ends, closed before any other child is forked: none inherits them.
        os.close(requests_r)
        os.close(ready_w)
    with _CHILDREN_LOCK:
        _CHILDREN.add(pid)
    said = os.read(ready_r, 1 + DIGEST_CHARS) if select.select([ready_r], [], [], FORK_START_S)[0] else b""
    if said[:1] == b"1":
        digest = said[1:].decode("ascii", "replace")
        return _Spare(pid, requests_w, ready_r, "" if digest == "-" * DIGEST_CHARS else digest)
    _retire(_Spare(pid, requests_w, ready_r, ""))
    return None


def _retire(spare: _Spare) -> None:
    """A spare that will run no request: killed, reaped, its pipes closed."""
    _kill(spare.pid)
    os.waitpid(spare.pid, 0)
    _close_private(spare.requests)
    _close_private(spare.ready)
    with _CHILDREN_LOCK:
        _CHILDREN.discard(spare.pid)


def _keep_spare() -> None:
    """The spare keeper: one spare ready at all times, replaced as soon as it is taken."""
    global _SPARE
    while True:
        spare = _fork_spare()
        if spare is None:
            time.sleep(1.0)  # a spare that cannot start: requests fork their own meanwhile
            continue
        with _SPARE_LOCK:
            _SPARE = spare
            _SPARE_TAKEN.clear()
        _SPARE_TAKEN.wait()


def _take_spare() -> _Spare | None:
    global _SPARE
    with _SPARE_LOCK:
        spare, _SPARE = _SPARE, None
    if spare is not None:
        _SPARE_TAKEN.set()
    return spare


def _fits(spare: _Spare, req: dict[str, Any]) -> bool:
    """The spare ran no spec code, or the very spec of this request."""
    if not spare.spec:
        return True
    source = _read_spec(str(req["plan"]))
    return source is not None and ahead.spec_digest(source) == spare.spec


def _hand_over(spare: _Spare, req: dict[str, Any]) -> bool:
    """The request written to the spare, once it has built its baselines; False (the spare
    retired) if it does not within AHEAD_S, or died building them."""
    try:
        os.write(spare.requests, (json.dumps(req) + "\n").encode())
    except OSError:  # the spare died waiting
        _retire(spare)
        return False
    built = select.select([spare.ready], [], [], AHEAD_S)[0] and os.read(spare.ready, 1) == b"w"
    if not built:
        _retire(spare)
        return False
    _close_private(spare.requests)
    _close_private(spare.ready)
    return True


def _fork_child(req: dict[str, Any]) -> int:
    with _FORK_LOCK:  # one fork at a time: a child is a copy of the zygote at one quiet moment
        pid = os.fork()
        if pid == 0:
            _forked()
            _child(req)
    with _CHILDREN_LOCK:
        _CHILDREN.add(pid)
    return pid


def _serve(req: dict[str, Any]) -> None:
    global _HINT
    started = time.monotonic()  # the request's deadline counts from here, as the worker's does
    if _GPU and req.get("mode") in ("candidate", "baselines"):
        _HINT = str(req["plan"])  # before the spare is taken: the next one is forked for it
    spare = _take_spare()
    if spare is not None and not _fits(spare, req):
        _retire(spare)  # it ran another spec's code: this request gets a process of its own
        spare = None
    if spare is not None and _hand_over(spare, req):
        pid = spare.pid
    else:
        pid = _fork_child(req)
    forked = time.monotonic()
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
        if not own_group and time.monotonic() - forked > FORK_START_S:
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


def warm_imports() -> None:
    """What every candidate imports on its first guarded call, imported once here, on every
    pool. The guards' dispatch mode imports TorchDynamo at the forward's first tensor
    operation (torch's dispatch-mode entry is wrapped to keep Dynamo off it): on the cpu pool
    that was 2.8 s of a 3.5 s screening run of a 16-bit RMSNorm, every candidate. Triton's
    launch imports its Gluon package to check argument types (0.1 s), where it has one."""
    import torch._dynamo  # noqa: F401

    try:
        import triton.experimental.gluon  # noqa: F401
    except ImportError:  # a Triton without Gluon has nothing to import
        pass


def _warm_gpu_imports() -> None:
    """What a GPU candidate would import anyway, imported once here; CUDA stays uninitialised
    (a context made before fork would be unusable in every child)."""
    import torch._inductor.compile_fx  # noqa: F401 - torch.compile baseline

    from .platforms import cuda  # noqa: F401

    if torch.cuda.is_initialized():
        raise RuntimeError("CUDA was initialised while warming the zygote; forked children could not use it")


def main() -> None:
    global _GPU
    warm_imports()
    if sys.argv[1:] == ["cuda"]:
        _GPU = True
        _warm_gpu_imports()
    interp_compat.apply()  # forked candidates inherit the patched interpreter
    torch.set_num_threads(1)  # no OpenMP pool in the zygote: forking after one starts deadlocks
    if _GPU:  # what a spare saves is the CUDA context: on a cpu pool, a fork costs as much as it saves
        threading.Thread(target=_keep_spare, daemon=True).start()
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
