"""The general lowering's tunables: choices its first draft fixes by rule and a search may
move (tile sizes, warps, pipeline stages, the order of a product's tiles, fusion boundary, rows
kept in registers).

The space is data (``kb/lowering/tunables.toml``); ``program_source`` lowers under one
:class:`Tunables` value, which kernel builders read from :data:`CURRENT`. GPU launch shapes
follow the tunables; interpreter shapes do not (they only decide screening speed).
"""

from __future__ import annotations

import contextvars
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


CONV_FORMS = ("auto", "gemm", "walk", "reduce")
CONV_K_ORDERS = ("taps", "channels")
SCAN_ORDERS = ("pytorch", "exact")
ATTENTION_SOFTMAXES = ("exact", "online")
ONLINE_MAXES = ("lanes", "rows")
FLOAT32_PRODUCTS = ("tensor", "ieee")


@dataclass(frozen=True)
class Tunables:
    pointwise_block: int = 1024
    num_warps: int = 4
    whole_row_max: int = 8192
    block_m: int = 0  # 0: by operand type and size
    block_n: int = 0
    block_k: int = 0
    num_stages: int = 3
    # Output tiles of a product visited in groups of this many tile rows (1: row by row, as the
    # first draft does): programs running together then share their operand tiles in L2.
    group_m: int = 1
    fuse_limit: int = 4
    attention_block: tuple[int, int] = (64, 64)
    # A convolution's form: "gemm" (an implicit GEMM on tensor cores), "walk" (each GPU lane
    # walks one output's taps), "reduce" (a block of outputs sums a block of taps at once),
    # "auto" (by its channels and taps: see ops_conv.py).
    conv_form: str = "auto"
    # The order a GEMM convolution walks its K (input channels x kernel taps): "taps" (tap by
    # tap, the channels of one tap in each step: the input offsets and bounds computed once
    # per step, the weight reordered once per call) or "channels" (the weight's own order,
    # each element's tap computed from its K index). "taps" needs 16 | channels per group.
    conv_k_order: str = "taps"
    # How a float sum or product scan runs on the GPU: "pytorch" (PyTorch's own GPU order and
    # rounding, its result to the bit) or "exact" (Triton's chunk scan, float32 accumulated in
    # float64: faster on some shapes, but off PyTorch's result by PyTorch's own rounding,
    # which a long row can carry past the comparison's tolerance). See ops_scan.gpu_order.
    scan_order: str = "pytorch"
    # How an attention whose spec rounds its probabilities to 16 bits rounds them: "exact"
    # (normalised, as softmax stores them: the keys are walked twice, once for each row's max
    # and sum) or "online" (the running, unnormalised ones, in one walk, as flash attention
    # and torch.compile's fused attention do: about 1.6x faster, off the spec's rounding by a
    # rounding step of each probability, which peaked rows of large values carry past a
    # 16-bit tolerance). See ops_attention.flash_kernel.
    attention_softmax: str = "exact"
    # The running max of a long row's online softmax (a max and a sum of exponentials in one
    # walk): "lanes" (each lane keeps its own, rescaling its sum at every element: two
    # exponentials an element) or "rows" (each chunk's max is taken across the row first and
    # the row's one running max rescales every lane's sum: one exponential an element, and a
    # max across the program's lanes a chunk). See rows._online_max_sum.
    online_max: str = "lanes"
    # Where float32 products run: "tensor" (on tensor cores at float32 accuracy: float32_dot)
    # or "ieee" (float32 FMAs summed in K order: slower, but within a float32 tolerance of
    # PyTorch's float32 GEMM where a long K carries the tensor forms' other order of sums past
    # it). See dot_float32.
    float32_product: str = "tensor"
    # How float32 operands are multiplied on tensor cores: "tf32x3" (three TF32 products,
    # float32 accuracy) unless the job allows TF32 ("tf32"). A permission, not a knob the
    # search turns: from_strings never sets it.
    float32_dot: str = "tf32x3"

    def dot_float32(self) -> str:
        """The ``input_precision`` of a float32 ``tl.dot`` under these choices."""
        return "ieee" if self.float32_product == "ieee" else self.float32_dot

    @classmethod
    def from_strings(cls, values: dict[str, str]) -> Tunables:
        """From a candidate's tunables (strings); unknown keys are ignored, bad values refused."""
        def num(key: str, default: int) -> int:
            raw = values.get(key)
            if raw is None or raw == "auto":
                return default
            value = int(raw)
            if value <= 0:
                raise ValueError(f"tunable {key} must be positive (got {raw})")
            return value

        def choice(key: str, options: tuple[str, ...]) -> str:
            """The key's value, one of ``options`` (the first is the default)."""
            value = values.get(key, options[0])
            if value not in options:
                raise ValueError(f"tunable {key} must be one of {', '.join(options)} (got {value})")
            return value

        block = values.get("ATTENTION_BLOCK", "64x64")
        m, _, n = block.partition("x")
        forms = {"conv_form": choice("CONV_FORM", CONV_FORMS), "conv_k_order": choice("CONV_K_ORDER", CONV_K_ORDERS),
                 "scan_order": choice("SCAN_ORDER", SCAN_ORDERS),
                 "attention_softmax": choice("ATTENTION_SOFTMAX", ATTENTION_SOFTMAXES),
                 "online_max": choice("ONLINE_MAX", ONLINE_MAXES),
                 "float32_product": choice("FLOAT32_PRODUCT", FLOAT32_PRODUCTS)}
        return cls(pointwise_block=num("POINTWISE_BLOCK", 1024), num_warps=num("num_warps", 4),
                   whole_row_max=num("WHOLE_ROW_MAX", 8192), block_m=num("BLOCK_M", 0), block_n=num("BLOCK_N", 0),
                   block_k=num("BLOCK_K", 0), num_stages=num("num_stages", 3), group_m=num("GROUP_M", 1),
                   fuse_limit=num("FUSE_LIMIT", 4),
                   attention_block=(int(m), int(n or m)), **forms)


CURRENT: contextvars.ContextVar[Tunables] = contextvars.ContextVar("lowering_tunables", default=Tunables())


def current() -> Tunables:
    return CURRENT.get()


@contextmanager
def using(tunables: Tunables) -> Iterator[None]:
    token = CURRENT.set(tunables)
    try:
        yield
    finally:
        CURRENT.reset(token)


def space(kb_dir: Path) -> dict[str, list[str]]:
    """The tunable space (first value of each list is the default)."""
    raw = tomllib.loads((kb_dir / "lowering" / "tunables.toml").read_text())
    return {str(k): [str(v) for v in values] for k, values in raw["tunables"].items()}
