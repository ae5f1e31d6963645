"""A fix for Triton 3.6's interpreter under NumPy 2.x, applied where candidates are interpreted.

Triton 3.6 converts an interpreted scalar to a Python int with ``int(handle.data)``. A scalar
loaded from memory (``start = tl.load(offsets + pid)``) holds a one-element *1-d* array there,
and recent NumPy refuses ``int()`` on anything but a 0-d array ("only 0-dimensional arrays can
be converted to Python scalars"), so ``range(start, end, BLOCK)`` fails in the interpreter
although the same kernel compiles and runs on a GPU. Later Triton releases squeeze the array
first; this applies the same change to releases that do not, and nothing else.
"""

from __future__ import annotations

from typing import Any


def apply() -> bool:
    """Patch the interpreter if it has the 3.6 behaviour; True when a patch was applied."""
    try:
        from triton.runtime import interpreter
    except ImportError:
        return False
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "_kevolve_compat", False):
        return False

    def patched(tensor: Any, scope: Any) -> None:
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    patched._kevolve_compat = True  # type: ignore[attr-defined]
    interpreter._patch_lang_tensor = patched
    return True
