"""The seam between the evaluation harness and a platform's way of measuring speed.

The harness (``services/evaluator/sandboxed/child.py``) decides correctness the same way on every
platform. Only *timing* differs: a real GPU measures, the cpu interpreter cannot, a
simulated accelerator estimates from a machine model. A platform plugs in by implementing
:class:`TimingPlatform` and exposing a ``create(platform)`` factory in a module of this
package (see ``__init__.py`` for the registry).

Contract (stable; other engineers build against it):

* ``prepare`` runs inside the candidate process once per case, after the correctness trials
  ran but *before* the worker has compared them: untimed set-up such as compiling the
  baselines and warming caches. It may overlap another candidate's timing on the same GPU,
  so it must not measure anything.
* ``time_case`` runs **inside the sandboxed candidate process**, only after every
  correctness trial of every case has passed (the trusted worker compared them). Time
  ``ctx.forward`` (the bare ``ModelNew.forward``, no guards, under ``torch.no_grad``) on
  inputs from ``ctx.make_inputs(i)`` (fresh data and storage each call: a kernel that caches
  results keyed on pointers or contents gains nothing); ``ctx.run_candidate`` is the guarded
  call (launches recorded, torch compute rejected, outputs copied to the host) for platforms
  that need the launches of a call (a simulator). The harness re-checks the
  candidate's outputs on unseen inputs *after* ``time_case`` returns, so a kernel that
  changes behaviour after N calls is caught on every platform.
* It returns a :class:`CaseTiming`. Platforms with ``speed == "none"`` return zeros.
* It may raise; the harness turns the exception into a ``timing:<rule>`` verdict.
* ``ctx.launches`` lists the Triton launches of the last correctness call (name, grid,
  tensor argument shapes/dtypes), which a machine model can use to estimate time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import torch

# What a platform returns per case (milliseconds, medians; 0 = not measured): the same typed
# record the child writes back to the worker. ``extra`` names the harness reads: "floor_ms"
# (bytes_moved / measured peak bandwidth; a time below it is flagged SUSPICIOUS),
# "async_gap_ms" (work that finished after the timed stream's end event: flagged when large).
from kevolve.reports import CaseTiming

Speed = Literal["none", "measured", "simulated"]


@dataclass
class KernelLaunch:
    """One Triton kernel launch seen by the harness's launch hook."""

    name: str
    grid: tuple[int, ...]
    # (shape, dtype name) of each tensor argument, in argument order.
    tensor_args: list[tuple[tuple[int, ...], str]] = field(default_factory=list)
    # Non-tensor arguments (ints, floats, constexprs) by parameter name where known.
    scalar_args: dict[str, Any] = field(default_factory=dict)


class TimerInfraError(RuntimeError):
    """A timing platform could not run for want of its own resources (GPU memory for its
    buffers, say): the evaluator's failure, which the controller retries, not the candidate's."""


@dataclass
class TimingContext:
    """Everything a platform needs to time one test case of one candidate."""

    case: str
    sizes: dict[str, int]
    device: str
    # The bare ModelNew.forward (what a timer should time).
    forward: Callable[[Sequence[Any]], Any]
    # The guarded call: raises on a runtime violation, fills ``launches``, returns CPU outputs.
    run_candidate: Callable[[Sequence[Any]], Any]
    # Fresh inputs for timing call i (new data, new storage), already on ``device``.
    make_inputs: Callable[[int], list[torch.Tensor]]
    # Builds the reference Model on ``device`` with the same weights (for baselines);
    # only platforms that time baselines call it.
    make_reference: Callable[[], torch.nn.Module]
    # Minimal bytes the operator must move (inputs + outputs): the physical floor.
    bytes_moved: float
    launches: list[KernelLaunch] = field(default_factory=list)
    # Which contenders a measuring timer prepares, and sets its lead by, and calls back to back
    # in its call loop (interleaved: that view depends on the host's load of the moment; a run
    # without the candidate, which samples a job's baselines, has no call loop).
    contenders: tuple[str, ...] = ("candidate", "eager", "compile")
    # Which of them get cold-L2 GPU-time samples (None: all). A full-stage candidate whose job's
    # baselines were sampled once, by a run without candidate code, samples itself alone.
    sampled: tuple[str, ...] | None = None
    # For runner "simulated": the machine model file (absolute path), from kb/platforms.toml.
    machine_model: str = ""


@runtime_checkable
class TimingPlatform(Protocol):
    """A platform's timing backend. See the module docstring for the contract."""

    name: str
    speed: Speed
    device: str  # torch device the harness puts tensors on: "cpu" or "cuda"

    def environment(self) -> dict[str, str]:
        """Facts recorded with every result (GPU name, driver, clocks, versions...)."""
        ...

    def prepare(self, ctx: TimingContext) -> None:
        """Untimed set-up for one case (compiles, warm-up); nothing here is measured."""
        ...

    def time_case(self, ctx: TimingContext) -> CaseTiming:
        """Time one case (inside the candidate process, after correctness passed)."""
        ...
