"""Which function lowers which operator: ``@lowers("prims.add.default")``.

A lowering receives the program being built (:class:`Builder`: it realizes values into
buffers and emits kernels), the node, and the node's decoded arguments; it returns the
node's value (or a list of values for an operator with several outputs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from services.generator.lowering.ir import Buffer, Stored, Value
from services.generator.lowering.kernels import Kernel
from services.generator.lowering.schema import Node, TensorMeta


class Builder(Protocol):
    def realize(self, value: Value, hint: str = "") -> Stored: ...
    def meta(self, ref: Any) -> TensorMeta | None: ...
    def reads_output(self, name: str, item: int) -> bool: ...
    def new_buffer(self, shape: tuple[int, ...], dtype: str, hint: str = "", zeroed: bool = False) -> Buffer: ...
    def emit(self, kernel: Kernel) -> None: ...
    def kernel_name(self, hint: str) -> str: ...
    def fill(self, buffer: Buffer, value: Value) -> None: ...
    def keep(self, buffer: Buffer) -> None: ...


Lowering = Callable[[Builder, Node, list[Any], dict[str, Any]], Any]
LOWERINGS: dict[str, Lowering] = {}


def lowers(*targets: str) -> Callable[[Lowering], Lowering]:
    def register(fn: Lowering) -> Lowering:
        for target in targets:
            LOWERINGS[target] = fn
        return fn

    return register
