"""Runtime anti-cheat guards, installed inside the sandboxed candidate process.

They observe one ``forward`` call: which Triton kernels launched (hooking both the compiled
launcher and the interpreter's grid executor), which aten ops PyTorch ran outside those
launches, whether threads or child processes appeared, whether guarded functions (timers,
comparators) were replaced, and whether the output is a plain tensor that owns real memory
and does not alias an input. Each failure names its rule (``runtime:<rule>``).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kevolve.exec.sandbox import code_roots

from .platforms.base import KernelLaunch


class GuardViolation(Exception):
    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(reason)
        self.rule = rule
        self.reason = reason


# aten ops a Triton wrapper legitimately causes: allocation, views, copies, metadata.
_ALLOWED_OPS = {
    "empty",
    "empty_like",
    "empty_strided",
    "new_empty",
    "new_empty_strided",
    "zeros",
    "zeros_like",
    "new_zeros",
    "ones",
    "ones_like",
    "new_ones",
    "full",
    "full_like",
    "new_full",
    "fill",
    "fill_",
    "zero_",
    "arange",
    "view",
    "_unsafe_view",
    "reshape",
    "as_strided",
    "t",
    "transpose",
    "permute",
    "expand",
    "contiguous",
    "clone",
    "copy_",
    "_to_copy",
    "to",
    "slice",
    "select",
    "unsqueeze",
    "squeeze",
    "detach",
    "alias",
    "lift_fresh",
    "lift_fresh_copy",
    "resize_",
    "split",
    "split_with_sizes",
    "chunk",
    "unbind",
    "flatten",
    "unflatten",
    "view_as",
    "expand_as",
    "narrow",
    "_local_scalar_dense",
    "is_same_size",
    "set_",
    "sym_size",
    "sym_stride",
    "sym_numel",
    "sym_storage_offset",
    "_reshape_alias",
    "movedim",
    "squeeze_",
    "unsqueeze_",
    "scalar_tensor",
    "item",
    "_has_compatible_shallow_copy_type",
}


class _LaunchState(threading.local):
    depth = 0


_STATE = _LaunchState()


class LaunchRecorder:
    """Counts Triton launches by patching the launch entry points once per process."""

    def __init__(self) -> None:
        self.launches: list[KernelLaunch] = []
        self._install()

    def _record(self, fn: Any, grid: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> None:
        name = getattr(fn, "__name__", None) or getattr(getattr(fn, "fn", None), "__name__", "kernel")
        try:
            grid_t = tuple(int(g) for g in grid) if isinstance(grid, (tuple, list)) else (-1,)
        except (TypeError, ValueError):
            grid_t = (-1,)
        tensors = [
            (tuple(a.shape), str(a.dtype).removeprefix("torch."))
            for a in [*args, *kwargs.values()]
            if isinstance(a, torch.Tensor)
        ]
        scalars = {k: v for k, v in kwargs.items() if isinstance(v, (int, float, bool))}
        self.launches.append(
            KernelLaunch(name=str(name), grid=grid_t, tensor_args=tensors, scalar_args=scalars)
        )

    def _install(self) -> None:
        from triton.runtime import jit

        recorder = self
        original_run = jit.JITFunction.run

        def run(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            if not warmup:
                resolved = grid
                recorder._record(self.fn, resolved if not callable(resolved) else (-1,), args, kwargs)
            _STATE.depth += 1
            try:
                return original_run(self, *args, grid=grid, warmup=warmup, **kwargs)
            finally:
                _STATE.depth -= 1

        jit.JITFunction.run = run  # type: ignore[method-assign]
        from triton.runtime import autotuner

        original_bench = getattr(autotuner.Autotuner, "_bench", None)

        def bench(self: Any, *args: Any, **kwargs: Any) -> Any:
            # The autotuner's benchmarking (do_bench's buffers and statistics) is Triton's work:
            # aten ops inside it are not counted. The launch that produces the output (and its
            # config pre_hook) runs outside _bench, so it is still watched.
            _STATE.depth += 1
            try:
                return original_bench(self, *args, **kwargs)  # type: ignore[misc]
            finally:
                _STATE.depth -= 1

        if original_bench is not None:  # a Triton without it: autotune ops are counted (stricter)
            autotuner.Autotuner._bench = bench  # type: ignore[method-assign]
        try:
            from triton.runtime import interpreter
        except ImportError:  # builds without the interpreter cannot run on the cpu pool anyway
            return
        original_call = interpreter.GridExecutor.__call__

        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            grid = self.grid(kwargs) if callable(self.grid) else self.grid
            recorder._record(self.fn, grid, args, kwargs)
            _STATE.depth += 1
            try:
                return original_call(self, *args, **kwargs)
            finally:
                _STATE.depth -= 1

        interpreter.GridExecutor.__call__ = call  # type: ignore[method-assign]


class OpCounter(TorchDispatchMode):
    """Records aten ops PyTorch runs outside Triton launches during ``forward``."""

    def __init__(self) -> None:
        super().__init__()
        self.compute_ops: dict[str, int] = {}

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if _STATE.depth == 0:
            name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
            if name.rstrip("_") not in _ALLOWED_OPS and name not in _ALLOWED_OPS:
                self.compute_ops[name] = self.compute_ops.get(name, 0) + 1
        return func(*args, **(kwargs or {}))


def guarded_functions() -> dict[str, Any]:
    """Functions a cheat might replace to fool a timer or comparator in this process."""
    import triton.testing

    found: dict[str, Any] = {
        "time.perf_counter": time.perf_counter,
        "time.time": time.time,
        "time.monotonic": time.monotonic,
        "torch.allclose": torch.allclose,
        "torch.equal": torch.equal,
        "torch.isclose": torch.isclose,
        "torch.testing.assert_close": torch.testing.assert_close,
        "torch.cuda.synchronize": torch.cuda.synchronize,
        "torch.cuda.Event.elapsed_time": torch.cuda.Event.elapsed_time,
        "torch.save": torch.save,
        "triton.testing.do_bench": triton.testing.do_bench,
        "torch.Tensor.__eq__": torch.Tensor.__eq__,
    }
    return found


def check_identity(originals: dict[str, Any]) -> None:
    now = guarded_functions()
    changed = [name for name, fn in originals.items() if now.get(name) is not fn]
    if changed:
        raise GuardViolation("monkeypatch", f"the candidate replaced {', '.join(changed)}")


def _process_children() -> list[psutil.Process]:
    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


@contextmanager
def observe_forward(recorder: LaunchRecorder) -> Iterator[OpCounter]:
    """Wraps one forward call; raises GuardViolation for what it saw."""
    threads_before = {t.ident for t in threading.enumerate()}
    children_before = {p.pid for p in _process_children()}
    recorder.launches.clear()
    counter = OpCounter()
    with torch.no_grad(), counter:
        yield counter
    new_threads = [t.name for t in threading.enumerate() if t.ident not in threads_before and t.is_alive()]
    if new_threads:
        raise GuardViolation("thread", f"forward left thread(s) running: {', '.join(new_threads)}")
    new_children = [p.pid for p in _process_children() if p.pid not in children_before]
    if new_children:
        raise GuardViolation("subprocess", f"forward left child process(es) running: {new_children}")
    if counter.compute_ops:
        ops = ", ".join(f"{k} x{v}" for k, v in sorted(counter.compute_ops.items()))
        raise GuardViolation("torch_compute", f"PyTorch computed outside the Triton kernels: {ops}")
    if not recorder.launches:
        raise GuardViolation("no_kernel_launch", "forward launched no Triton kernel")


def flatten_outputs(out: Any) -> list[torch.Tensor]:
    """The output(s) of forward as a list of plain tensors, checked for lazy/fake values."""
    items = list(out) if isinstance(out, (tuple, list)) else [out]
    for i, item in enumerate(items):
        if type(item) is not torch.Tensor:
            raise GuardViolation(
                "output_type",
                f"output {i} is {type(item).__module__}.{type(item).__qualname__}, not a plain torch.Tensor",
            )
        if item.device.type == "meta" or item.is_sparse:
            raise GuardViolation("output_storage", f"output {i} has no real storage ({item.device.type})")
        try:
            item.untyped_storage().data_ptr()
        except (RuntimeError, NotImplementedError) as exc:
            raise GuardViolation("output_storage", f"output {i} has no real storage: {exc}") from exc
    return items


def _span(t: torch.Tensor) -> tuple[int, int]:
    storage = t.untyped_storage()
    return storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def check_aliasing(outputs: Sequence[torch.Tensor], inputs: Sequence[torch.Tensor]) -> None:
    for i, out in enumerate(outputs):
        o0, o1 = _span(out)
        for j, inp in enumerate(inputs):
            if not isinstance(inp, torch.Tensor):
                continue
            i0, i1 = _span(inp)
            if o0 < i1 and i0 < o1 and out.numel() and inp.numel():
                raise GuardViolation("alias", f"output {i} shares memory with input {j}")


# Audit events (PEP 578) that start a process or call native code by hand.
_PROCESS_EVENTS = {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
                   "subprocess.Popen", "pty.spawn"}
_NATIVE_EVENTS = {"ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function"}
# What a compiler toolchain legitimately starts while Triton or Inductor compile a kernel on
# a GPU (ptxas, the launcher stub's C compiler, ldconfig to find libcuda).
# ``file``: Python's platform.architecture() runs it, and Triton keys its compile cache on that.
_TOOLCHAIN = {"ptxas", "cc", "gcc", "g++", "c++", "clang", "clang++", "ld", "ld.lld", "ldconfig",
              "ldconfig.real", "nvdisasm", "cuobjdump", "nvcc", "fatbinary", "nvlink", "file"}


def _package_dirs() -> tuple[str, ...]:
    import numpy
    import triton

    return tuple(str(Path(m.__file__).resolve().parent) + "/" for m in (torch, triton, numpy) if m.__file__)


class ProcessGuard:
    """The rule "a candidate starts no process and calls no native code by hand", enforced at
    run time with an audit hook (installed once; it cannot be removed).

    Static checks already reject ``subprocess``/``os``/``ctypes`` imports, but a candidate can
    reach them through other modules' attributes. Whatever the route, starting a process or
    calling a foreign function raises an audit event; while armed, the hook refuses it unless
    the call comes from torch's, Triton's or numpy's own code (a GPU kernel's compile runs
    ptxas and a C compiler) and, for a process, the program is a compiler toolchain's. The
    refused call raises in the candidate, and the attempt is recorded so the verdict names it
    even if the candidate swallowed the error.
    """

    def __init__(self) -> None:
        self.armed = False
        self.violations: list[str] = []
        self._libraries = _package_dirs()
        self._own = str(Path(__file__).resolve())
        # The evaluator's own code (timers, platform probes) is trusted; candidates are loaded
        # from their scratch directory, never from here.
        self._trusted = tuple(str(p.resolve()) + "/" for p in code_roots())
        sys.addaudithook(self._hook)

    def _caller(self) -> str:
        """Who made the call: "own" (the evaluator's code), "library" (torch, Triton, numpy) or
        "candidate", by the innermost frame outside the standard library."""
        frame = sys._getframe(2)
        stdlib = str(Path(os.__file__).resolve().parent) + "/"
        while frame is not None:
            name = frame.f_code.co_filename
            if name != self._own and not name.startswith(stdlib) and not name.startswith("<frozen"):
                if name.startswith(self._trusted):
                    return "own"
                return "library" if name.startswith(self._libraries) else "candidate"
            frame = frame.f_back
        return "candidate"

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.armed or (event not in _PROCESS_EVENTS and event not in _NATIVE_EVENTS):
            return
        caller = self._caller()
        if caller == "own":
            return
        if event in _NATIVE_EVENTS:
            if caller == "library":
                return
            what = f"called native code by hand ({event})"
        else:
            program = _program(event, args)
            if caller == "library" and (Path(program).name in _TOOLCHAIN or _gpu_query(event, args)):
                return
            what = f"started a process ({event}: {program or 'fork'})"
        self.violations.append(what)
        raise GuardViolation("process", f"the candidate {what}; candidates may not start processes")

    def check(self) -> None:
        if self.violations:
            raise GuardViolation("process", f"the candidate {self.violations[0]}; candidates may not start processes")


def _gpu_query(event: str, args: tuple[Any, ...]) -> bool:
    """``nvidia-smi --query-gpu=... --format=...`` (read-only), as Triton's and Inductor's own
    code runs it (``triton.testing.nvsmi``: Inductor asks for clocks while compiling a GEMM
    baseline). Any other nvidia-smi command is refused like any other program."""
    if event != "subprocess.Popen":
        return False
    try:
        argv = [os.fsdecode(a) for a in args[1]] if not isinstance(args[1], (str, bytes)) else []
    except (IndexError, TypeError):
        return False
    if not argv or Path(argv[0]).name != "nvidia-smi" or (args[0] and Path(os.fsdecode(args[0])).name != "nvidia-smi"):
        return False
    rest = argv[1:]
    return any(a.startswith("--query-gpu=") for a in rest) and all(
        a.startswith(("--query-gpu=", "--format=")) or a in ("-i", "--id") or a.isdigit() for a in rest)


def _program(event: str, args: tuple[Any, ...]) -> str:
    """The program an audited process event starts, as best the event's arguments say."""
    try:
        if event == "subprocess.Popen":
            executable, argv = args[0], args[1]
            if executable:
                return os.fsdecode(executable)
            first = argv if isinstance(argv, (str, bytes)) else next(iter(argv), "")
            return os.fsdecode(first).split()[0] if first else ""
        if event == "os.system":
            return os.fsdecode(args[0]).split()[0]
        if event in ("os.exec", "os.posix_spawn"):
            return os.fsdecode(args[0])
        if event == "os.spawn":
            return os.fsdecode(args[1])
    except (IndexError, TypeError, ValueError, StopIteration):
        pass
    return ""
