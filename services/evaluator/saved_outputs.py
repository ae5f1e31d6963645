"""A run's saved outputs compared with the reference's, each as soon as the child has written it.

The candidate child saves one file per trial (and per re-check set), renaming it into place
once it is whole. The worker compares every file that is there, in order, while the child
goes on with the next call: the comparison of a set then ends moments after the child's
last save instead of starting there (on an H100, comparing a re-check set after the child
had ended took 0.26 s of every evaluation's wall time).

What is compared, and how, is ``compare.py``'s; this module only decides when, and keeps
the first disagreement until the caller applies it (a child's own failure is judged first).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import torch

from .compare import Mismatch as Disagreement
from .compare import compare
from .protocol import EvalPlan, PlanCase


# How a full GPU refuses this process's comparison: the allocator's own error, or the driver's
# (AcceleratorError "CUDA error: out of memory", raised where the allocator is not involved,
# as when this process first creates its CUDA context on a GPU its candidates have filled).
GPU_FULL: tuple[type[BaseException], ...] = (torch.cuda.OutOfMemoryError, getattr(torch, "AcceleratorError", RuntimeError))

@dataclass
class Problem:
    """Why a set failed: the verdict, the check that decided it, and what the report shows."""

    verdict: str
    decided_by: str
    reason: str
    mismatch: dict[str, object] | None = None


@dataclass
class OutputComparer:
    plan: EvalPlan
    ref_dir: Path
    work: Path
    kind: Literal["trials", "recheck"]
    atol: float
    rtol: float
    device: str = "cpu"
    problem: Problem | None = None
    # Largest errors of the outputs that matched, per case index.
    errors: dict[int, dict[str, float]] = field(default_factory=dict)
    _pending: list[tuple[PlanCase, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._pending = [(case, i) for case in self.plan.cases for i in range(len(case.draws(self.kind)))]

    @property
    def total(self) -> int:
        return sum(len(case.draws(self.kind)) for case in self.plan.cases)

    @property
    def done(self) -> bool:
        return self.problem is not None or not self._pending

    def _out_file(self, case: PlanCase, i: int) -> Path:
        return self.work / "out" / str(case.index) / f"{self.kind}{i}.pt"

    def advance(self) -> bool:
        """Compare every output already saved, in order; True once the set is decided."""
        while not self.done and self._out_file(*self._pending[0]).exists():
            self._compare_next()
        return self.done

    def finish(self) -> None:
        """Compare whatever is left: the child has ended or said every output is saved (a file
        still missing then is the candidate's failure)."""
        while not self.done:
            self._compare_next()

    def _compare_next(self) -> None:
        case, i = self._pending.pop(0)
        # Mapped, not read: the comparison streams them to where it runs.
        expected = torch.load(self.ref_dir / "ref" / str(case.index) / f"expected_{self.kind}{i}.pt",
                              weights_only=True, mmap=True)
        try:
            got = torch.load(self._out_file(case, i), weights_only=True, mmap=True)
            if not isinstance(got, list) or not all(type(t) is torch.Tensor for t in got):
                raise ValueError("outputs file does not hold plain tensors")
        except Exception as exc:  # noqa: BLE001 - a tampered or missing file is a failure
            self.problem = Problem("REJECTED_RUNTIME", "runtime:output_file",
                                   f"case {case.name} {self.kind} {i}: the candidate's outputs could not be read ({exc})")
            return
        try:
            res = compare(expected, got, self.atol, self.rtol, self.device)
        except GPU_FULL as exc:  # the GPU is full of candidates: the host compares
            if not isinstance(exc, torch.cuda.OutOfMemoryError) and "out of memory" not in str(exc):
                raise
            res = compare(expected, got, self.atol, self.rtol)
        # Compared: the file goes now, not with the run. Seven sets of a production-size
        # output per candidate, a dozen candidates at once, filled a GPU host's scratch disk.
        del got
        self._out_file(case, i).unlink(missing_ok=True)
        if isinstance(res, Disagreement):
            check = "recheck_after_timing" if self.kind == "recheck" else res.check
            self.problem = Problem(
                "INCORRECT", f"trial:{check}",
                f"case {case.name}, {self.kind} {i}: {res.reason}"
                + (" (correct earlier, wrong after repeated calls)" if self.kind == "recheck" else ""),
                {"case": case.name, "trial": i, "kind": self.kind, **res.details, "max_abs_error": res.max_abs_error},
            )
            return
        errors = self.errors.setdefault(case.index, {"max_abs_error": 0.0, "max_rel_error": 0.0})
        errors["max_abs_error"] = max(errors["max_abs_error"], res.max_abs_error)
        errors["max_rel_error"] = max(errors["max_rel_error"], res.max_rel_error)
