"""Count what Triton kernels do while they run under the interpreter (TRITON_INTERPRET=1).

The interpreter executes every ``tl.*`` operation through one builder object
(``triton.runtime.interpreter.interpreter_builder``) and every launch through
``GridExecutor.__call__``. :class:`InterpTrace` wraps those entry points for the duration
of a ``with`` block and records, per launch: the grid, program instances, loads/stores and
the bytes they really move (only lanes whose mask is true), elementwise vector ops,
special-function ops (exp, log, sqrt, rsqrt, erf, sin, cos), dot ops and their FLOPs,
reductions, and the largest tile one program instance touches (for SRAM-fit rules).

Counts are machine independent; ``kevolve.exec.mtia_sim`` turns them into time estimates and
the profiler reports them as they are. The hooks depend on interpreter internals: if an
attribute they need is missing (a Triton upgrade renamed it), entering the trace raises
:class:`TraceUnavailable` naming it, rather than silently counting nothing.

Kernels must have been decorated while TRITON_INTERPRET=1 was set (that is when
``@triton.jit`` builds an interpreted function); compiled launches are not seen.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Builder methods whose result runs on a special function unit on most accelerators.
SFU_METHODS: dict[str, str] = {
    "create_exp": "exp", "create_exp2": "exp", "create_log": "log", "create_log2": "log",
    "create_sqrt": "sqrt", "create_precise_sqrt": "sqrt", "create_rsqrt": "rsqrt",
    "create_erf": "erf", "create_sin": "sin", "create_cos": "cos",
}
# Every elementwise operator funnels through one of these (the create_f* lambdas call them).
VECTOR_METHODS = ("binary_op", "ternary_op", "unary_op", "create_fma", "cast_impl", "create_fp_to_fp",
                  "create_fabs", "create_umulhi", "create_idiv", "create_ashr")
MEMORY_METHODS = ("create_masked_load", "create_masked_store", "create_atomic_rmw", "create_atomic_cas")
REQUIRED_BUILDER = (*SFU_METHODS, *VECTOR_METHODS, *MEMORY_METHODS, "create_dot", "set_grid_dim",
                    "set_grid_idx")


class TraceUnavailable(RuntimeError):
    """The installed Triton's interpreter lacks an internal this instrumentation hooks."""


@dataclass
class LaunchTrace:
    """Counters of one kernel launch (all program instances of its grid)."""

    name: str
    grid: tuple[int, int, int] = (1, 1, 1)
    programs: int = 0
    loads: int = 0
    stores: int = 0
    bytes_loaded: int = 0          # only lanes whose mask was true
    bytes_stored: int = 0
    atomics: int = 0
    # numel of the op's result -> how many such ops: a machine with W-wide vectors spends
    # ceil(numel / W) instructions per op, so the histogram keeps the estimate exact.
    vector_ops: Counter[int] = field(default_factory=Counter)
    sfu_ops: Counter[int] = field(default_factory=Counter)
    sfu_elems: Counter[str] = field(default_factory=Counter)  # kind -> elements
    reduce_elems: int = 0
    dot_ops: int = 0
    dot_flops: int = 0
    max_tile_bytes: int = 0        # largest single load/store tile, all lanes (what local memory holds)
    max_block_elems: int = 0       # largest tensor any op of one program instance produced
    max_program_bytes: int = 0     # most bytes one program instance moved
    arg_bytes_in: int = 0          # bytes of the tensor arguments (unique storages)
    arg_tensors: list[tuple[tuple[int, ...], str]] = field(default_factory=list)
    _program_bytes: int = 0

    @property
    def vector_elems(self) -> int:
        return sum(n * c for n, c in self.vector_ops.items())

    @property
    def sfu_total(self) -> int:
        return sum(self.sfu_elems.values())

    def end_program(self) -> None:
        self.max_program_bytes = max(self.max_program_bytes, self._program_bytes)
        self._program_bytes = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "grid": list(self.grid), "programs": self.programs, "loads": self.loads,
            "stores": self.stores, "bytes_loaded": self.bytes_loaded, "bytes_stored": self.bytes_stored,
            "atomics": self.atomics, "vector_elems": self.vector_elems,
            "vector_ops": sum(self.vector_ops.values()), "sfu_elems": dict(self.sfu_elems),
            "reduce_elems": self.reduce_elems, "dot_ops": self.dot_ops, "dot_flops": self.dot_flops,
            "max_tile_bytes": self.max_tile_bytes, "max_block_elems": self.max_block_elems,
            "max_program_bytes": self.max_program_bytes, "arg_bytes": self.arg_bytes_in,
            "arg_tensors": [[list(s), d] for s, d in self.arg_tensors],
        }


@dataclass
class KernelSummary:
    """Launches of one kernel (by name) added up, for reports."""

    name: str
    launches: int = 0
    grids: list[list[int]] = field(default_factory=list)
    programs: int = 0
    bytes_loaded: int = 0
    bytes_stored: int = 0
    vector_elems: int = 0
    sfu_elems: int = 0
    dot_flops: int = 0
    max_tile_bytes: int = 0
    max_block_elems: int = 0


def _elem_bytes(tl_dtype: Any) -> int:
    bits = int(getattr(tl_dtype, "primitive_bitwidth", 32))
    return max(1, bits // 8)


def _numel(handle: Any) -> int:
    data = getattr(handle, "data", None)
    return int(np.size(data)) if data is not None else 1


_local = threading.local()


class InterpTrace:
    """``with InterpTrace() as t: model(*inputs)`` then read ``t.launches``.

    Not reentrant and not thread-safe (the interpreter itself runs one program at a time).
    """

    def __init__(self) -> None:
        self.launches: list[LaunchTrace] = []
        self._current: LaunchTrace | None = None
        self._saved: list[tuple[object, str, object]] = []
        self._depth = 0  # >0 while inside a counted op: its internal helper calls are not recounted

    # -- installing the hooks ------------------------------------------------------------
    def __enter__(self) -> InterpTrace:
        try:
            from triton.runtime import interpreter as interp
        except ImportError as exc:  # pragma: no cover - triton is a hard dependency
            raise TraceUnavailable(f"triton's interpreter cannot be imported: {exc}") from exc
        builder_cls = getattr(interp, "InterpreterBuilder", None)
        grid_cls = getattr(interp, "GridExecutor", None)
        reduce_cls = getattr(interp, "ReduceScanOpInterface", None)
        missing = [n for n, v in (("InterpreterBuilder", builder_cls), ("GridExecutor", grid_cls),
                                  ("ReduceScanOpInterface", reduce_cls)) if v is None]
        missing += [f"InterpreterBuilder.{m}" for m in REQUIRED_BUILDER
                    if builder_cls is not None and not hasattr(builder_cls, m)]
        if missing:
            raise TraceUnavailable("this Triton's interpreter lacks " + ", ".join(missing)
                                   + f" (triton {getattr(interp.triton, '__version__', '?')}); "
                                   "kevolve.exec.interp_trace needs updating for it")
        if getattr(_local, "active", None) is not None:
            raise RuntimeError("an InterpTrace is already active in this thread")
        _local.active = self
        self._patch(grid_cls, "__call__", self._wrap_launch)
        self._patch(builder_cls, "set_grid_dim", self._wrap_grid_dim)
        self._patch(builder_cls, "set_grid_idx", self._wrap_grid_idx)
        self._patch(builder_cls, "create_masked_load", self._wrap_load)
        self._patch(builder_cls, "create_masked_store", self._wrap_store)
        self._patch(builder_cls, "create_atomic_rmw", self._wrap_atomic)
        self._patch(builder_cls, "create_atomic_cas", self._wrap_atomic)
        self._patch(builder_cls, "create_dot", self._wrap_dot)
        for name, kind in SFU_METHODS.items():
            self._patch(builder_cls, name, self._wrap_sfu(kind))
        for name in VECTOR_METHODS:
            self._patch(builder_cls, name, self._wrap_vector)
        self._patch(reduce_cls, "apply", self._wrap_reduce)
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()
        _local.active = None
        if self._current is not None:  # a launch that raised mid-grid still counts what it did
            self._current.end_program()
            self._current = None

    def _patch(self, owner: type, name: str,
               make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        original = owner.__dict__.get(name, getattr(owner, name))
        self._saved.append((owner, name, original))
        setattr(owner, name, make(original))

    # -- wrappers ------------------------------------------------------------------------
    def _wrap_launch(self, original: Callable[..., Any]) -> Callable[..., Any]:
        tracer = self

        def launch(executor: Any, *args: Any, **kwargs: Any) -> Any:
            record = LaunchTrace(name=getattr(executor.fn, "__name__", "kernel"))
            seen: set[int] = set()
            for arg in (*args, *kwargs.values()):
                # A tensor descriptor (TMA loads) stands for the tensor it describes.
                arg = getattr(arg, "base", arg) if type(arg).__name__ == "TensorDescriptor" else arg
                if hasattr(arg, "untyped_storage") and hasattr(arg, "element_size"):
                    record.arg_tensors.append((tuple(arg.shape), str(arg.dtype).removeprefix("torch.")))
                    ptr = arg.untyped_storage().data_ptr()
                    if ptr not in seen:  # views of one buffer count once
                        seen.add(ptr)
                        record.arg_bytes_in += int(arg.numel()) * int(arg.element_size())
            tracer._current = record
            try:
                return original(executor, *args, **kwargs)
            finally:
                record.end_program()
                tracer.launches.append(record)
                tracer._current = None

        return launch

    def _wrap_grid_dim(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def set_grid_dim(builder: Any, nx: int, ny: int, nz: int) -> Any:
            if self._current is not None:
                self._current.grid = (int(nx), int(ny), int(nz))
            return original(builder, nx, ny, nz)
        return set_grid_dim

    def _wrap_grid_idx(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def set_grid_idx(builder: Any, x: int, y: int, z: int) -> Any:
            if self._current is not None:
                self._current.end_program()
                self._current.programs += 1
            return original(builder, x, y, z)
        return set_grid_idx

    def _note_block(self, numel: int) -> None:
        if self._current is not None and numel > self._current.max_block_elems:
            self._current.max_block_elems = numel

    def _memory(self, ptrs: Any, mask: Any, store: bool) -> None:
        rec = self._current
        if rec is None or self._depth:
            return
        elem = _elem_bytes(ptrs.get_element_ty())
        shape = np.shape(ptrs.data)
        if mask is not None:
            lanes = int(np.count_nonzero(np.broadcast_to(mask.data, shape)))
        else:
            lanes = int(np.size(ptrs.data))
        moved = lanes * elem
        tile = int(np.size(ptrs.data)) * elem
        if store:
            rec.stores += 1
            rec.bytes_stored += moved
        else:
            rec.loads += 1
            rec.bytes_loaded += moved
        rec._program_bytes += moved
        rec.max_tile_bytes = max(rec.max_tile_bytes, tile)
        self._note_block(int(np.size(ptrs.data)))

    # The cache/eviction arguments after the mask differ between Triton releases (3.6 passes
    # a cache modifier and an eviction policy, 3.9 one cache policy): pass them through.
    def _wrap_load(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def load(builder: Any, ptrs: Any, mask: Any, *rest: Any, **kwargs: Any) -> Any:
            self._memory(ptrs, mask, store=False)
            return original(builder, ptrs, mask, *rest, **kwargs)
        return load

    def _wrap_store(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def store(builder: Any, ptrs: Any, value: Any, mask: Any, *rest: Any, **kwargs: Any) -> Any:
            self._memory(ptrs, mask, store=True)
            return original(builder, ptrs, value, mask, *rest, **kwargs)
        return store

    def _wrap_atomic(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def atomic(builder: Any, *args: Any, **kwargs: Any) -> Any:
            rec = self._current
            # (rmwOp, ptr, val, mask, sem, scope) or (ptr, cmp, val, sem, scope)
            ptr = args[1] if len(args) == 6 else args[0]
            mask = args[3] if len(args) == 6 else None
            if rec is not None and not self._depth:
                rec.atomics += 1
                self._memory(ptr, mask, store=False)
                self._memory(ptr, mask, store=True)
            return original(builder, *args, **kwargs)
        return atomic

    def _counted(self, original: Callable[..., Any], builder: Any, args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> tuple[Any, bool]:
        """Run ``original`` with nested counting suppressed; say whether this call is the outermost."""
        outer = self._depth == 0 and self._current is not None
        self._depth += 1
        try:
            return original(builder, *args, **kwargs), outer
        finally:
            self._depth -= 1

    def _wrap_vector(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def vector(builder: Any, *args: Any, **kwargs: Any) -> Any:
            result, outer = self._counted(original, builder, args, kwargs)
            if outer and self._current is not None:
                n = _numel(result)
                self._current.vector_ops[n] += 1
                self._note_block(n)
            return result
        return vector

    def _wrap_sfu(self, kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def make(original: Callable[..., Any]) -> Callable[..., Any]:
            def sfu(builder: Any, *args: Any, **kwargs: Any) -> Any:
                result, outer = self._counted(original, builder, args, kwargs)
                if outer and self._current is not None:
                    n = _numel(result)
                    self._current.sfu_ops[n] += 1
                    self._current.sfu_elems[kind] += n
                    self._note_block(n)
                return result
            return sfu
        return make

    def _wrap_dot(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def dot(builder: Any, a: Any, b: Any, d: Any, *args: Any, **kwargs: Any) -> Any:
            result, outer = self._counted(original, builder, (a, b, d, *args), kwargs)
            if outer and self._current is not None:
                a_shape, b_shape = np.shape(a.data), np.shape(b.data)
                batch = int(np.prod(a_shape[:-2])) if len(a_shape) > 2 else 1
                m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
                self._current.dot_ops += 1
                self._current.dot_flops += 2 * batch * int(m) * int(n) * int(k)
                self._note_block(max(_numel(a), _numel(b), _numel(result)))
            return result
        return dot

    def _wrap_reduce(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def apply(op: Any, input: Any) -> Any:
            outer = self._depth == 0 and self._current is not None
            self._depth += 1
            try:
                result = original(op, input)
            finally:
                self._depth -= 1
            if outer and self._current is not None:
                tensors = input if isinstance(input, tuple) else (input,)
                n = sum(_numel(getattr(t, "handle", t)) for t in tensors)
                # A tree reduction is one vector pass over its input (plus lane shuffles, ignored).
                self._current.reduce_elems += n
                self._current.vector_ops[n] += 1
                self._note_block(n)
            return result
        return apply

    # -- results ---------------------------------------------------------------------------
    def summaries(self) -> list[KernelSummary]:
        by_name: dict[str, KernelSummary] = {}
        for rec in self.launches:
            s = by_name.setdefault(rec.name, KernelSummary(rec.name))
            s.launches += 1
            if list(rec.grid) not in s.grids and len(s.grids) < 8:
                s.grids.append(list(rec.grid))
            s.programs += rec.programs
            s.bytes_loaded += rec.bytes_loaded
            s.bytes_stored += rec.bytes_stored
            s.vector_elems += rec.vector_elems
            s.sfu_elems += rec.sfu_total
            s.dot_flops += rec.dot_flops
            s.max_tile_bytes = max(s.max_tile_bytes, rec.max_tile_bytes)
            s.max_block_elems = max(s.max_block_elems, rec.max_block_elems)
        return list(by_name.values())

    @property
    def bytes_loaded(self) -> int:
        return sum(r.bytes_loaded for r in self.launches)

    @property
    def bytes_stored(self) -> int:
        return sum(r.bytes_stored for r in self.launches)

