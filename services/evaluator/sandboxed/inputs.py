"""Trial inputs: fresh per trial, from secret seeds, in distributions a cheat cannot predict.

Each trial re-seeds from its own seed (derived from the request's seed, never 42), calls the
spec's ``get_inputs()``, then applies a variant to floating-point tensors so inputs are not
always zero-mean normal: ``affine`` rescales and shifts (all-positive / all-negative data,
large magnitudes), ``sparse`` zeroes a random tenth of the elements (kernels that skip work
on special values get caught). A variant keeps the domain ``get_inputs()`` drew from, since
a trial outside it tests the reference's accident (or its error) instead of the spec:
a tensor made sorted along its last axis (searchsorted / bucketize borders) is sorted again,
one with every value in [0, 1] (probabilities, binary-cross-entropy targets, which torch
rejects outside it) is reshaped by a power instead of rescaled, and a non-negative one is
shifted up only. Runs in the sandboxed children (reference and candidate).
"""

from __future__ import annotations

from typing import Any

import torch

from ..protocol import VARIANTS

__all__ = ["VARIANTS", "degenerate", "make_inputs", "sorted_rows"]


def make_inputs(spec: Any, seed: int, variant: str, device: str, on_device: bool = False) -> list[Any]:
    """The spec's inputs for one draw, with the variant applied, on ``device``.

    ``on_device``: the spec's ``get_inputs`` runs with ``device`` as the default device, so
    its random tensors are drawn there instead of on one CPU thread and copied (4.7 s for the
    three timing sets of a 16-bit RMSNorm spec on an H200 host). The values then differ from a
    CPU draw with the same seed, so only inputs that are saved and loaded by every run that
    uses them (the reference run's trials) or that nothing is compared on (timing) are made so;
    a ``get_inputs`` that cannot run that way (it calls ``.numpy()``, say) is drawn on the CPU."""
    if on_device and device != "cpu":
        try:
            with torch.device(device):
                return _draw(spec, seed, variant, device)
        except Exception:  # noqa: BLE001 - the spec's code, not ours: the CPU draw below decides
            pass
    return _draw(spec, seed, variant, device)


def _draw(spec: Any, seed: int, variant: str, device: str) -> list[Any]:
    torch.manual_seed(seed)
    raw = list(spec.get_inputs())
    gen_seed = seed ^ 0x5F3759DF
    gen_cpu = torch.Generator().manual_seed(gen_seed)
    gens = {torch.device("cpu"): gen_cpu}  # one per device the spec's tensors are on
    out: list[Any] = []
    for value in raw:
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel() > 1:
            gen = gens.get(value.device)
            if gen is None:
                gen = gens[value.device] = torch.Generator(value.device).manual_seed(gen_seed)
            ordered = sorted_rows(value)
            value = _apply(value, variant, gen, gen_cpu)
            if ordered:
                value = value.sort(dim=-1).values
        out.append(value.to(device) if isinstance(value, torch.Tensor) else value)
    return out


# Rows shorter than this are sorted by chance too often to be taken for sorted data.
MIN_SORTED_ROW = 8


def sorted_rows(t: torch.Tensor) -> bool:
    """Whether every row of ``t`` along its last axis is non-decreasing (rows of 8 or more)."""
    if t.dim() == 0 or t.shape[-1] < MIN_SORTED_ROW:
        return False
    return bool((t[..., 1:] >= t[..., :-1]).all())


def _apply(t: torch.Tensor, variant: str, gen: torch.Generator, scalars: torch.Generator) -> torch.Tensor:
    """``gen`` draws on ``t``'s device; ``scalars`` (a CPU generator) draws the affine map."""
    if variant == "affine":
        # On the CPU by name: under a GPU default device (timing inputs drawn there) a bare
        # torch.empty(1) is a GPU tensor the CPU generator cannot fill, and the whole draw fell
        # back to the CPU (1.5 s for a 32M-element fp16 input).
        scale = float(torch.empty(1, device="cpu").uniform_(0.25, 3.0, generator=scalars))
        shift = float(torch.empty(1, device="cpu").uniform_(-2.0, 2.0, generator=scalars))
        lo, hi = float(t.min()), float(t.max())  # NaN compares false: the plain variant
        if 0.0 <= lo and hi <= 1.0:
            # x ** p maps [0, 1] onto itself (0 and 1 stay): values pushed toward 0 or 1
            return (t.float() ** scale).to(t.dtype)
        if lo >= 0.0:
            shift = abs(shift)
        return (t.float() * scale + shift).to(t.dtype)
    if variant == "sparse":
        keep = torch.rand(t.shape, generator=gen, device=t.device) >= 0.1
        return t * keep.to(t.dtype)
    return t


def degenerate(outputs: list[torch.Tensor]) -> str:
    """Why these reference outputs cannot tell right from wrong ("" when they can)."""
    for i, out in enumerate(outputs):
        if not out.is_floating_point() or out.numel() < 2:
            continue
        finite = out[torch.isfinite(out)]
        if finite.numel() == 0:
            return f"output {i} has no finite value"
        if bool((finite == 0).all()):
            return f"output {i} is all zeros"
        if bool((finite == finite.flatten()[0]).all()):
            return f"output {i} is constant"
    return ""
