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
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import torch

from kevolve.specfile import load_module

SHRINK_FROM = 16          # smaller integer constants are kernel sizes, strides, counts: kept
FLOOR = 8                 # a shrunk size never goes below this (nor below its own value)
BUDGET = 1 << 17          # elements of inputs and parameters together
FLOP_BUDGET = 2 * 10**7   # of the forward, as torch's FLOP counter counts them
LIMIT = 16 * BUDGET       # larger than this is never run for real here
MAX_STEPS = 16            # factors 2 .. 65536


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


def footprint(source: str, path: str, sizes: dict[str, int]) -> int | None:
    """Elements of the spec's inputs, model state and outputs at ``sizes``, with fake tensors, scaled
    up where its forward does more than ``FLOP_BUDGET`` allows per ``BUDGET`` elements; None
    when the spec cannot be built that way (it reads data on the host, say)."""
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
            flops = 0
            try:
                counter = FlopCounterMode(display=False)
                with counter, torch.no_grad():
                    # Outputs count too: an outer product of two vectors is small inputs and
                    # a large result.
                    elements += _elements(model.eval()(*inputs))
                flops = counter.get_total_flops()
            except Exception:  # noqa: BLE001 - a forward fake tensors cannot run: elements decide
                pass
            return max(elements, flops * BUDGET // FLOP_BUDGET)
    except Exception:  # noqa: BLE001 - unknown footprint: decided by real runs instead
        return None


def runs(source: str, path: str, sizes: dict[str, int]) -> bool:
    """Whether the spec builds, makes inputs and runs its forward at ``sizes`` with non-empty
    outputs (sizes too large to try here count as not running)."""
    try:
        module = load_module(source, "kevolve_spec_sizes", sizes or None, filename=path)
        torch.manual_seed(0)
        model = module.Model(*module.get_init_inputs()).eval()
        inputs = module.get_inputs()
        if _inputs_and_state(model, inputs) > LIMIT:
            return False
        with torch.no_grad():
            out = model(*inputs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        return bool(outs) and not any(isinstance(o, torch.Tensor) and o.numel() == 0 for o in outs)
    except Exception:  # noqa: BLE001 - these sizes do not work for this spec
        return False


def derive(source: str, path: str, sizes: dict[str, int], time_left: Callable[[], float]) -> dict[str, int]:
    """The screening sizes for a spec with the module-level integer constants ``sizes``; {}
    when it is small already or no smaller sizes work."""
    big = {name: value for name, value in sizes.items() if value >= SHRINK_FROM}
    if not big:
        return {}
    full = footprint(source, path, {})
    if full is not None and full <= BUDGET:
        return {}
    tried: list[tuple[dict[str, int], int | None]] = []
    for step in range(1, MAX_STEPS + 1):
        shrunk = {name: max(min(value, FLOOR), value >> step) for name, value in big.items()}
        if tried and shrunk == tried[-1][0]:
            break  # every size is at its floor
        elements = footprint(source, path, shrunk)
        tried.append((shrunk, elements))
        if elements is not None and elements <= BUDGET:
            break
    # The smallest sizes that fit first, then larger ones while they stay runnable here.
    for shrunk, elements in reversed(tried):
        if time_left() <= 0 or (elements is not None and elements > LIMIT):
            break
        if runs(source, path, shrunk):
            return shrunk
    return _loosen(source, path, big, tried[-1][0], time_left) if tried else {}


def _loosen(source: str, path: str, big: dict[str, int], smallest: dict[str, int],
            time_left: Callable[[], float]) -> dict[str, int]:
    """Sizes for a spec that no common factor fits: one size must stay a multiple of something
    the spec does not say at module level (GroupNorm(32, channels) with channels = 320 takes
    320 and 160, not 80). From the smallest sizes, each size in turn (largest first) takes the
    smallest of its own halvings with which the spec runs; a size that no halving of its own
    fixes stays as written and the next one is tried with it. The sizes kept as written on
    the way are then shrunk again, each as far as the spec still runs."""
    current = dict(smallest)

    def options(name: str) -> list[int]:
        return sorted({max(min(big[name], FLOOR), big[name] >> step) for step in range(MAX_STEPS + 1)})

    for name in sorted(big, key=lambda n: -big[n]):
        for value in (v for v in options(name) if v > current[name]):
            if time_left() <= 0:
                return {}
            if runs(source, path, {**current, name: value}):
                current[name] = value
                return _tighten(source, path, current, smallest, options, time_left)
        current[name] = big[name]
    return {}


def _tighten(source: str, path: str, sizes: dict[str, int], smallest: dict[str, int],
             options: Callable[[str], list[int]], time_left: Callable[[], float]) -> dict[str, int]:
    for name in [n for n in sizes if sizes[n] > smallest[n]]:
        for value in (v for v in options(name) if v < sizes[name]):
            if time_left() <= 0:
                return sizes
            if runs(source, path, {**sizes, name: value}):
                sizes = {**sizes, name: value}
                break
    return sizes


def deadline(seconds: float) -> Callable[[], float]:
    ends = time.monotonic() + seconds
    return lambda: ends - time.monotonic()
