"""Fixes for Triton 3.6's interpreter, applied where candidates are interpreted: it must compute
what the GPU computes, or a correct kernel fails its screening (and a wrong one passes).

1. Scalars under NumPy 2.x.

Triton 3.6 converts an interpreted scalar to a Python int with ``int(handle.data)``. A scalar
loaded from memory (``start = tl.load(offsets + pid)``) holds a one-element *1-d* array there,
and recent NumPy refuses ``int()`` on anything but a 0-d array ("only 0-dimensional arrays can
be converted to Python scalars"), so ``range(start, end, BLOCK)`` fails in the interpreter
although the same kernel compiles and runs on a GPU. Later Triton releases squeeze the array
first; this applies the same change to releases that do not.

2. float32 to bfloat16. The interpreter truncates the mantissa where the GPU rounds to
nearest even (``x.to(tl.bfloat16)``'s default, and PyTorch's): every rounded value may be
off by one bfloat16 step (0.03 at 4-8), more than a bfloat16 tolerance allows. The
conversion is replaced by the exact round-to-nearest-even, NaN kept quiet.

3. Integer overflow checks. The interpreter checks every 32-bit integer add, sub and mul for
overflow (both operands cast to 64 bits, the operation done again, the result compared with
the bounds and asserted): four interpreted operations more for each one, which a GPU build
inserts only in debug mode. On a kernel's index arithmetic they took most of the interpreted
time (a transposed 3-D convolution: 1.5 of 2.5 s). Off, the interpreter's NumPy int32
arithmetic wraps as the GPU's does.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


def float32_to_bfloat16_bits(values: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) of float32 ``values``, rounded to nearest even."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))
    nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    return np.where(nan, (bits >> np.uint32(16)) | np.uint32(0x40), rounded).astype(np.uint16)


def apply() -> bool:
    """Patch the interpreter where it has the 3.6 behaviour; True when a patch was applied."""
    try:
        from triton.runtime import interpreter
    except ImportError:
        return False
    scalars = _index_scalars(interpreter)
    overflow = _no_overflow_checks(interpreter)
    return _round_bfloat16(interpreter) or scalars or overflow


def _index_scalars(interpreter: Any) -> bool:
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "_kevolve_compat", False):
        return False

    def patched(tensor: Any, scope: Any) -> None:
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    patched._kevolve_compat = True  # type: ignore[attr-defined]
    interpreter._patch_lang_tensor = patched
    return True


def _round_bfloat16(interpreter: Any) -> bool:
    import triton.language as tl

    builder = getattr(interpreter, "InterpreterBuilder", None)
    if builder is None or getattr(builder.cast_impl, "_kevolve_compat", False):
        return False
    cast = builder.cast_impl

    def cast_impl(self: Any, src: Any, dst_type: Any) -> Any:
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16:
            return interpreter.TensorHandle(float32_to_bfloat16_bits(src.data), dst_type.scalar)
        return cast(self, src, dst_type)

    cast_impl._kevolve_compat = True  # type: ignore[attr-defined]
    # create_fp_trunc and the other casts call self.cast_impl: replacing it serves them all.
    builder.cast_impl = cast_impl
    fp_to_fp = builder.create_fp_to_fp

    def create_fp_to_fp(self: Any, src: Any, dst_type: Any, rounding_mode: Any) -> Any:
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16 and \
                rounding_mode in (None, interpreter._ir.ROUNDING_MODE.RTNE):
            return self.cast_impl(src, dst_type)
        return fp_to_fp(self, src, dst_type, rounding_mode)

    builder.create_fp_to_fp = create_fp_to_fp
    return True


def _no_overflow_checks(interpreter: Any) -> bool:
    builder = getattr(interpreter, "InterpreterBuilder", None)
    options = getattr(interpreter, "InterpreterOptions", None)
    if builder is None or options is None or "sanitize_overflow" not in getattr(options, "__dataclass_fields__", {}) \
            or getattr(builder.__init__, "_kevolve_compat", False):
        return False
    init = builder.__init__

    def patched(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.options = dataclasses.replace(self.options, sanitize_overflow=False)

    patched._kevolve_compat = True  # type: ignore[attr-defined]
    builder.__init__ = patched
    # The interpreter builds its one builder when it is imported.
    existing = getattr(interpreter, "interpreter_builder", None)
    if existing is not None:
        existing.options = dataclasses.replace(existing.options, sanitize_overflow=False)
    return True
