"""Output comparison, run in the trusted worker on tensors loaded from the children's files."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

# Per-dtype tolerances (the torchbench values KernelBench uses); a spec's atol/rtol override.
TOLERANCES = {torch.float32: 1e-4, torch.float64: 1e-7, torch.float16: 1e-2, torch.bfloat16: 1e-2}


@dataclass
class Mismatch:
    check: str  # "shape", "dtype", "nan_inf", "allclose", "count"
    reason: str
    max_abs_error: float = 0.0
    details: dict[str, object] = field(default_factory=dict)


@dataclass
class Agreement:
    max_abs_error: float
    max_rel_error: float


def tolerance(dtype: torch.dtype, atol: float, rtol: float) -> tuple[float, float]:
    default = TOLERANCES.get(dtype, 0.0)
    return (atol or default), (rtol or default)


CHUNK = 1 << 22  # elements: a few MB of temporaries per step instead of a dozen full-size ones


def _all_finite_and_close(
    ref: torch.Tensor, out: torch.Tensor, atol: float, rtol: float, wide: torch.dtype, device: str = "cpu"
) -> tuple[float, float] | None:
    """(max abs error, max rel error) when every value of both is finite and within tolerance.

    None as soon as a chunk holds a non-finite value or an element out of tolerance: the
    caller then runs the full element-wise analysis, which names what is wrong and where.
    Working chunk by chunk keeps a comparison of 10^8 elements from allocating a dozen
    temporaries of its size (5.8 s for one 32M-element fp16 output on a CI core, before).

    ``device``: where the chunks are compared. A GPU pool's worker compares on its GPU: the
    same element-wise IEEE operations and exact reductions give the same numbers as on the
    host, in a fraction of the time (a 32M-element output took ~0.3 s on 16 host cores).
    """
    flat_ref, flat_out = ref.reshape(-1), out.reshape(-1)
    max_abs = max_rel = 0.0
    for start in range(0, flat_ref.numel(), CHUNK):
        r = flat_ref[start:start + CHUNK].to(device=device, dtype=wide)
        o = flat_out[start:start + CHUNK].to(device=device, dtype=wide)
        if not (bool(torch.isfinite(r).all()) and bool(torch.isfinite(o).all())):
            return None
        diff = (o - r).abs_()  # a new tensor: in-place from here on never touches the inputs
        mag = r.abs()  # not abs_(): ``.to(wide)`` returns the caller's tensor when it is already wide
        if bool((diff > atol + rtol * mag).any()):
            return None
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, float((diff / mag.clamp_min_(1e-12)).max()))
    return max_abs, max_rel


def _boundary_only(bad: torch.Tensor) -> bool:
    """Whether every wrong element lies in the last tenth of some dimension (a masking bug)."""
    if bad.dim() == 0 or not bad.any():
        return False
    idx = bad.nonzero()
    for dim, size in enumerate(bad.shape):
        if size >= 4 and bool((idx[:, dim] >= size - max(1, size // 10)).all()):
            return True
    return False


def compare(
    expected: list[torch.Tensor], got: list[torch.Tensor], atol: float, rtol: float, device: str = "cpu"
) -> Agreement | Mismatch:
    """Whether ``got`` matches ``expected`` within tolerance, or what is wrong and where.

    ``device`` runs the common case (every value finite and close) there; any disagreement
    is analysed on the host, where it is named."""
    if len(got) != len(expected):
        return Mismatch("count", f"forward returned {len(got)} output(s), the reference {len(expected)}")
    worst_abs = worst_rel = 0.0
    for i, (ref, out) in enumerate(zip(expected, got, strict=True)):
        if tuple(out.shape) != tuple(ref.shape):
            return Mismatch(
                "shape",
                f"output {i} has shape {list(out.shape)}, expected {list(ref.shape)}",
                details={"expected_shape": list(ref.shape), "got_shape": list(out.shape)},
            )
        if out.dtype != ref.dtype:
            return Mismatch("dtype", f"output {i} has dtype {out.dtype}, expected {ref.dtype}")
        if not ref.is_floating_point():
            if not torch.equal(out, ref):
                wrong = out != ref
                return Mismatch(
                    "allclose",
                    f"output {i}: {int(wrong.sum())} of {ref.numel()} integer values differ",
                    details={"frac_wrong": float(wrong.float().mean())},
                )
            continue
        a, r = tolerance(ref.dtype, atol, rtol)
        # 16-bit outputs are compared in float32 (it holds every fp16/bf16 value exactly, and
        # their tolerances are 1e-2): half the memory traffic of float64 on tensors of 10^8
        # elements, which is most of a GPU evaluation's comparison time.
        wide = torch.float64 if ref.dtype.itemsize >= 4 else torch.float32
        quick = _all_finite_and_close(ref, out, a, r, wide, device)
        if quick is not None:  # the common case, decided chunk by chunk; else the full analysis
            worst_abs, worst_rel = max(worst_abs, quick[0]), max(worst_rel, quick[1])
            continue
        ref64, out64 = ref.to(wide), out.to(wide)
        ref_finite = torch.isfinite(ref64)
        nan_bad = torch.isnan(out64) & ~torch.isnan(ref64)
        inf_bad = torch.isinf(out64) & ~(torch.isinf(ref64) & (out64 == ref64))
        if bool(nan_bad.any()) or bool(inf_bad.any()):
            return Mismatch(
                "nan_inf",
                f"output {i} has {int(nan_bad.sum())} NaN and {int(inf_bad.sum())} Inf "
                "values where the reference has finite ones",
                details={
                    "nan_in_output": bool(nan_bad.any()),
                    "inf_in_output": bool(inf_bad.any()),
                    "frac_wrong": float((nan_bad | inf_bad).double().mean()),
                },
            )
        diff = torch.where(ref_finite, (out64 - ref64).abs(), torch.zeros_like(ref64))
        # Reference NaN/Inf must be matched exactly (same non-finite value at the same place).
        nonfinite_bad = ~ref_finite & ~(torch.isnan(ref64) & torch.isnan(out64)) & ~(out64 == ref64)
        bad = (diff > a + r * ref64.abs().where(ref_finite, torch.zeros_like(ref64))) | nonfinite_bad
        max_abs = float(diff.max()) if diff.numel() else 0.0
        rel = diff / ref64.abs().clamp_min(1e-12)
        max_rel = float(rel.where(ref_finite, torch.zeros_like(rel)).max()) if rel.numel() else 0.0
        if bool(bad.any()):
            return Mismatch(
                "allclose",
                f"output {i}: {int(bad.sum())} of {ref.numel()} values outside "
                f"atol={a:g} rtol={r:g} (max abs error {max_abs:.3g})",
                max_abs,
                details={
                    "frac_wrong": float(bad.double().mean()),
                    "boundary_only": _boundary_only(bad),
                    "max_abs_error": max_abs,
                    "nan_in_output": False,
                    "inf_in_output": False,
                },
            )
        worst_abs, worst_rel = max(worst_abs, max_abs), max(worst_rel, max_rel)
    return Agreement(worst_abs, worst_rel)
