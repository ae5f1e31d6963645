"""The captured program: what the sandboxed capture child sends back to the generator.

One :class:`CapturedCase` per shape the candidate will be called at (the spec's production
sizes, its screening sizes, its declared test cases): the spec's ``Model`` exported with
``torch.export`` and decomposed to PyTorch's primitive operators (``prims``, plus the few
ATen operators kept whole: matrix products, convolution, pooling, scans, sorting, indexing),
with each value's shape and dtype from the graph's metadata. Everything here is data: the
generator lowers it to Triton without running any of the spec's code.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class TensorMeta(BaseModel):
    shape: list[int]
    dtype: str  # torch dtype name without the "torch." prefix: "float32", "int64", "bool"
    stride: list[int] = Field(default_factory=list)
    offset: int = 0  # storage offset: where a view starts in its base's storage


class Placeholder(BaseModel):
    """A graph input: one of forward's arguments, or a parameter/buffer/constant of the module."""

    name: str
    # "attribute": a tensor the module holds as a plain attribute (``self.h0 = torch.randn(...)``),
    # neither parameter nor buffer: read from the module at run time, on the input's device.
    kind: Literal["input", "parameter", "buffer", "attribute", "constant"]
    target: str = ""                 # the module attribute path (``conv.weight``) of a parameter/buffer/attribute
    meta: TensorMeta | None = None   # None for a non-tensor forward argument
    value: Any = None                # a non-tensor forward argument's value (the graph specialises it)
    position: int = -1               # forward's positional index, for inputs


class Node(BaseModel):
    """One operator application. Arguments are encoded values (see ``capture.encode``):
    ``{"ref": name}`` for another node's value, ``{"ref": name, "item": i}`` for the i-th
    output of a multi-output node, ``{"dtype": "float32"}``, ``{"float": "inf"}``, lists and
    plain numbers, strings, booleans and None."""

    name: str
    target: str                      # "prims.add.default", "aten.convolution.default", ...
    args: list[Any]
    kwargs: dict[str, Any] = Field(default_factory=dict)
    outputs: list[TensorMeta | None]  # one entry per output (a single output: one entry)


class AttrUse(BaseModel):
    """A constant in the graph that is a float attribute of the module (``self.scale``,
    ``self.bn.eps``): the candidate reads the attribute at run time instead of baking it."""

    node: str
    path: list[int | str]            # where in the node's (args, kwargs) the constant sits
    attr: str                        # attribute path from the model: "scale", "bn.eps"


class CapturedCase(BaseModel):
    name: str
    sizes: dict[str, int]
    placeholders: list[Placeholder]
    nodes: list[Node]
    outputs: list[Any]               # encoded values, in forward's output order
    out_structure: Literal["single", "tuple", "list"]
    constants: dict[str, list[Any]] = Field(default_factory=dict)  # small lifted tensors, flattened
    attr_uses: list[AttrUse] = Field(default_factory=list)
    # Attributes the graph was specialised on (ints, tuples, strings, floats it folded): a
    # ModelNew whose attributes differ from every case's refuses to run, naming the attribute.
    signature: dict[str, Any] = Field(default_factory=dict)
    init_args: list[Any] = Field(default_factory=list)


class Capture(BaseModel):
    ok: bool = True
    error: str = ""
    where: str = ""                  # which case or step failed, when not ok
    cases: list[CapturedCase] = Field(default_factory=list)
    forward_args: list[str] = Field(default_factory=list)
