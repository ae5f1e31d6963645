"""Screening sizes for a spec that declares none (runs inside the spec probe's sandbox).

Specs are written for a GPU: a 4096 x 393216 softmax, a batch of 64 224-pixel images. The
cpu pool screens candidates under Triton's interpreter, which needs inputs of some ten
thousand elements to answer in seconds, so a spec without ``cpu_shapes`` gets screening
sizes derived here: every module-level size constant of at least ``SHRINK_FROM`` is divided
by one power of two (kernel sizes, strides, head and group counts stay as written, and one
factor for all keeps their ratios: ``d_model`` stays divisible by ``heads``), the smallest
factor whose inputs and parameters fit ``BUDGET`` elements and whose forward fits
``FLOP_BUDGET`` (a convolution's work grows with channels times kernel area, not with its
inputs). Footprints are computed with fake tensors (nothing allocated); the chosen sizes are
then run for real (build, inputs, forward), and a factor that breaks the spec (an image too
small for its convolutions) gives way to the next larger sizes.

A spec that no common factor fits (a classifier whose input width is a literal tied to the
image size, channels that must stay a multiple of a group count) has its sizes moved one at a
time; one still over the budget at ``FLOOR`` (its layer widths are literals, so only its
batch and the widths its constants set can shrink) takes sizes below it, down to
``LAST_FLOOR``, as long as its outputs stay free of NaN.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import torch

from kevolve.specfile import load_module

SHRINK_FROM = 16          # smaller integer constants are kernel sizes, strides, counts: kept
FLOOR = 8                 # a shrunk size never goes below this (nor below its own value) ...
LAST_FLOOR = 2            # ... unless the spec is still over budget there: then down to this
BUDGET = 1 << 17          # elements of inputs and parameters together
FLOP_BUDGET = 2 * 10**7   # of the forward, as torch's FLOP counter counts them
# Larger than this (inputs, outputs and model state) is never run for real here: the probe's
# sandbox has 4 GiB. A model whose own layers hold more than the budget (a classifier of
# 8192 x 2048 written as literals) still shrinks what its size constants set.
LIMIT = 1 << 26
MAX_STEPS = 16            # factors 2 .. 65536

Sizes = dict[str, int]


def _elements(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, (list, tuple)):
        return sum(_elements(v) for v in value)
    if isinstance(value, dict):
        return sum(_elements(v) for v in value.values())
    return 0


def _inputs_and_state(model: Any, inputs: Any) -> int:
    return _elements(inputs) + sum(t.numel() for t in model.state_dict().values() if isinstance(t, torch.Tensor))


def _fake_run(source: str, path: str, sizes: Sizes) -> tuple[int, bool] | None:
    """(footprint, whether the forward ran) at ``sizes`` with fake tensors: the elements of the
    inputs, model state and outputs, scaled up where the forward does more than
    ``FLOP_BUDGET`` allows per ``BUDGET`` elements; None when the spec cannot be built that way
    (it reads data on the host, say)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils.flop_counter import FlopCounterMode

    # Sizes that break the spec are expected here; fake tensors log each such failure.
    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)

    try:
        module = load_module(source, "kevolve_spec_sizes", sizes or None, filename=path)
        with FakeTensorMode(allow_non_fake_inputs=True):
            torch.manual_seed(0)
            model = module.Model(*module.get_init_inputs())
            inputs = module.get_inputs()
            elements = _inputs_and_state(model, inputs)
            flops, ran = 0, False
            try:
                counter = FlopCounterMode(display=False)
                with counter, torch.no_grad():
                    # Outputs count too: an outer product of two vectors is small inputs and
                    # a large result.
                    elements += _elements(model.eval()(*inputs))
                flops, ran = counter.get_total_flops(), True
            except Exception:  # noqa: BLE001 - a forward fake tensors cannot run: elements decide
                pass
            return max(elements, flops * BUDGET // FLOP_BUDGET), ran
    except Exception:  # noqa: BLE001 - unknown footprint: decided by real runs instead
        return None


def footprint(source: str, path: str, sizes: Sizes) -> int | None:
    """Elements the spec holds at ``sizes`` (see ``_fake_run``); None when unknown."""
    fake = _fake_run(source, path, sizes)
    return fake[0] if fake else None


def runs(source: str, path: str, sizes: Sizes, finite: bool = False) -> bool:
    """Whether the spec builds, makes inputs and runs its forward at ``sizes`` with non-empty
    outputs (sizes too large to try here count as not running); with ``finite``, also without a
    NaN in a floating output (a variance over one element, a norm of an empty group)."""
    try:
        module = load_module(source, "kevolve_spec_sizes", sizes or None, filename=path)
        torch.manual_seed(0)
        model = module.Model(*module.get_init_inputs()).eval()
        inputs = module.get_inputs()
        if _inputs_and_state(model, inputs) > LIMIT:
            return False
        with torch.no_grad():
            out = model(*inputs)
        outs = [o for o in (out if isinstance(out, (list, tuple)) else [out]) if isinstance(o, torch.Tensor)]
        if not outs or any(o.numel() == 0 for o in outs):
            return False
        return not finite or not any(o.is_floating_point() and bool(o.isnan().any()) for o in outs)
    except Exception:  # noqa: BLE001 - these sizes do not work for this spec
        return False


def derive(source: str, path: str, sizes: Sizes, time_left: Callable[[], float]) -> Sizes:
    """The screening sizes for a spec with the module-level integer constants ``sizes``; {}
    when it is small already or no smaller sizes work. Out of time, the smallest sizes found
    to run so far."""
    big = {name: value for name, value in sizes.items() if value >= SHRINK_FROM}
    if not big:
        return {}
    full = _fake_run(source, path, {})
    if full is not None and full[0] <= BUDGET:
        return {}
    # Where fake tensors run the spec as written, a size they refuse is refused for real too,
    # and checking that costs no real model: most sizes tried below break the spec.
    search = _Search(source, path, big, time_left, trust_fake=full is not None and full[1])
    chosen = search.common_factor()
    return search.below_floor(chosen) if chosen else {}


class _Search:
    def __init__(self, source: str, path: str, big: Sizes, time_left: Callable[[], float], trust_fake: bool) -> None:
        self.source, self.path, self.big = source, path, big
        self.time_left, self.trust_fake = time_left, trust_fake

    def footprint(self, sizes: Sizes) -> int | None:
        return footprint(self.source, self.path, sizes)

    def runs(self, sizes: Sizes, finite: bool = False) -> bool:
        if self.trust_fake:
            fake = _fake_run(self.source, self.path, sizes)
            if fake is None or not fake[1]:
                return False
        return runs(self.source, self.path, sizes, finite)

    def options(self, name: str) -> list[int]:
        """The halvings of a size down to its floor, smallest first."""
        value = self.big[name]
        return sorted({max(min(value, FLOOR), value >> step) for step in range(MAX_STEPS + 1)})

    def common_factor(self) -> Sizes:
        tried: list[tuple[Sizes, int | None]] = []
        for step in range(1, MAX_STEPS + 1):
            shrunk = {name: max(min(value, FLOOR), value >> step) for name, value in self.big.items()}
            if tried and shrunk == tried[-1][0]:
                break  # every size is at its floor
            elements = self.footprint(shrunk)
            tried.append((shrunk, elements))
            if elements is not None and elements <= BUDGET:
                break
        # The smallest sizes that fit first, then larger ones while they stay runnable here.
        for shrunk, elements in reversed(tried):
            if self.time_left() <= 0 or (elements is not None and elements > LIMIT):
                break
            if self.runs(shrunk):
                return shrunk
        return self.loosen(tried[-1][0]) if tried else {}

    def loosen(self, smallest: Sizes) -> Sizes:
        """Sizes for a spec that no common factor fits: one size must stay a multiple of
        something the spec does not say at module level (GroupNorm(32, channels) with channels
        = 320 takes 320 and 160, not 80). From the smallest sizes, each size in turn (largest
        first) takes the smallest of its own halvings with which the spec runs; a size that no
        halving of its own fixes stays as written and the next one is tried with it. The sizes
        kept as written on the way are then shrunk again, each as far as the spec still runs."""
        current = dict(smallest)
        for name in sorted(self.big, key=lambda n: -self.big[n]):
            for value in (v for v in self.options(name) if v > current[name]):
                if self.time_left() <= 0:
                    return {}
                if self.runs({**current, name: value}):
                    current[name] = value
                    return self.tighten(current, smallest)
            current[name] = self.big[name]
        return {}

    def tighten(self, sizes: Sizes, smallest: Sizes) -> Sizes:
        for name in [n for n in sizes if sizes[n] > smallest[n]]:
            for value in (v for v in self.options(name) if v < sizes[name]):
                if self.time_left() <= 0:
                    return sizes
                if self.runs({**sizes, name: value}):
                    sizes = {**sizes, name: value}
                    break
        return sizes

    def below_floor(self, sizes: Sizes) -> Sizes:
        """Sizes still over the budget with every shrinkable size at ``FLOOR`` go lower, each
        size at its floor in turn (largest as written first) down to ``LAST_FLOOR``, while the
        spec runs without a NaN."""
        for name in sorted(self.big, key=lambda n: -self.big[n]):
            elements = self.footprint(sizes)
            if elements is None or elements <= BUDGET:
                break
            if sizes[name] != FLOOR:
                continue
            value = LAST_FLOOR
            while value < FLOOR and self.time_left() > 0:
                if self.runs({**sizes, name: value}, finite=True):
                    sizes = {**sizes, name: value}
                    break
                value *= 2
        return sizes


def deadline(seconds: float) -> Callable[[], float]:
    ends = time.monotonic() + seconds
    return lambda: ends - time.monotonic()
