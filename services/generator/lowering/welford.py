"""A variance in one walk over its elements: Welford's running mean and squared deviations per
lane, merged across lanes and across a row's slices with Chan's formula.

The two-pass variance (the mean, then the squared deviations from it) reads every element
twice; over rows long enough to be split across programs each pass is a kernel of its own,
and the mean a spec asks for beside it (``var_mean``, a norm's statistics) was a third walk.
One walk computes, per lane, the count ``n``, the running mean ``m`` and the sum ``q`` of
squared deviations from it; a lane's sums merge into a slice's, and the slices' into the
row's, exactly (no ``sum(x^2) - sum(x)^2`` cancellation), as PyTorch and Inductor do.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.generator.lowering.ir import KernelWriter


@dataclass
class Lanes:
    """The three accumulators of one variance, each [XBLOCK, RBLOCK] of the accumulation type."""

    n: str
    m: str
    q: str


def start(k: KernelWriter, shape: str, acc: str, tl_acc: str) -> Lanes:
    """Zeroed accumulators (a lane that sees no element keeps n = m = q = 0)."""
    lanes = Lanes(k.fresh("wn"), k.fresh("wm"), k.fresh("wq"))
    for name in (lanes.n, lanes.m, lanes.q):
        k.line(f"{name} = tl.full({shape}, 0, {tl_acc})")
        k.dtypes[name] = acc
    return lanes


def update(k: KernelWriter, lanes: Lanes, v: str, mask: str, step: str) -> None:
    """Fold one block of values into the lanes where ``mask`` holds; ``step`` (code) is the
    block's number from 0. A lane's mask holds from the first block until its row ends, so a
    lane that takes this block's value takes its ``step + 1``-th: one reciprocal per block,
    not a division per element. Written with plain assignments: the accumulators change every
    step, so no expression over them may be shared with a later one (``KernelWriter.var``
    would)."""
    inv, d = k.fresh("wstep"), k.fresh("wdelta")
    k.line(f"{inv} = 1.0 / ({step} + 1)")
    k.line(f"{lanes.n} = tl.where({mask}, {lanes.n} + 1, {lanes.n})")
    k.line(f"{d} = {v} - {lanes.m}")
    k.line(f"{lanes.m} = tl.where({mask}, {lanes.m} + {d} * {inv}, {lanes.m})")
    k.line(f"{lanes.q} = tl.where({mask}, {lanes.q} + {d} * ({v} - {lanes.m}), {lanes.q})")


def merge_lanes(k: KernelWriter, lanes: Lanes) -> Lanes:
    """Each row's count, mean and squared deviations from its lanes ([XBLOCK, 1] each); lanes
    that saw nothing weigh nothing."""
    n = k.fresh("wrow_n")
    k.line(f"{n} = tl.sum({lanes.n}, 1)[:, None]")
    m = k.fresh("wrow_m")
    k.line(f"{m} = tl.sum({lanes.n} * {lanes.m}, 1)[:, None] / tl.maximum({n}, 1)")
    q = k.fresh("wrow_q")
    k.line(f"{q} = tl.sum({lanes.q} + {lanes.n} * ({lanes.m} - {m}) * ({lanes.m} - {m}), 1)[:, None]")
    return Lanes(n, m, q)


def merge_slices(k: KernelWriter, n: str, m: str, q: str, mask: str, count: int) -> str:
    """The squared deviations of whole rows of ``count`` elements from the slices' counts,
    means and squared deviations (``[XBLOCK, slices]`` each, masked lanes ignored). The mean
    divides by the row's length as known when lowering: counts summed in float32 are exact
    only up to 2**24."""
    mean = k.fresh("wmean")
    k.line(f"{mean} = tl.sum(tl.where({mask}, {n} * {m}, 0), 1)[:, None] / {count}")
    total = k.fresh("wtotal")
    k.line(f"{total} = tl.sum(tl.where({mask}, {q} + {n} * ({m} - {mean}) * ({m} - {mean}), 0), 1)[:, None]")
    return total
