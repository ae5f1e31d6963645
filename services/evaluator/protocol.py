"""What the trusted worker and the sandboxed children share: file names in a run's scratch
directory, the trial-input variants and the seed derivation, the evaluation plan both children
run and the results they write back.

The worker (``harness.py`` and what it calls) and the code that runs inside the sandbox
(``sandboxed/``) import this module and nothing of each other, so the trust boundary is
the boundary between those two folders.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from kevolve.exec.childstatus import ChildStatus
from kevolve.platforms import Platform
from kevolve.reports import CaseTiming, KernelLaunches

# Files of one run's scratch directory (the child's whole view of the filesystem).
PLAN_FILE = "plan.json"
SPEC_FILE = "spec.py"
CANDIDATE_FILE = "candidate.py"
REF_META_FILE = "ref_meta.json"       # what the reference run measured per case (bytes moved...)
MACHINE_MODEL_FILE = "machine_model.toml"  # a simulated platform's machine model, copied in
# The candidate's two phases: it writes TRIALS_MARKER when its correctness outputs are saved
# (the worker compares them while the child prepares its timing), PHASE1_MARKER when it is
# ready to be timed, then waits for the worker's GO (or STOP) file; TIMED_MARKER says its
# timing loop is over.
# Files that cross while the other side is running are written under PART_SUFFIX and renamed
# into place once whole: the worker copies each input file in (the plan, spec, candidate and
# weights are there before the child starts) in the order the child reads them, and the
# child waits for each; the child saves each output file so, and the worker compares it the
# moment it appears.
PART_SUFFIX = ".part"
TRIALS_MARKER = "trials.json"
PHASE1_MARKER = "phase1.json"
GO, STOP = "go", "stop"
TIMED_MARKER = "timed.json"

# Trial i draws its inputs with variant VARIANTS[i % len(VARIANTS)] (see sandboxed/inputs.py).
VARIANTS = ("raw", "affine", "sparse", "raw", "affine")


def derive_seed(base: int, *parts: object) -> int:
    """A 62-bit seed from the request seed and a label; never the famous 42."""
    digest = hashlib.sha256(":".join([str(base), *map(str, parts)]).encode()).digest()
    seed = int.from_bytes(digest[:8], "little") >> 2
    return seed if seed != 42 else seed + 1


class _Document(BaseModel):
    """A part of a JSON document this module defines; also reads by key, as the JSON does."""

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


class Draw(_Document):
    """One set of trial inputs: its secret seed and its variant."""

    seed: int
    variant: str


class PlanCase(_Document):
    index: int
    name: str
    sizes: dict[str, int]           # the overrides this case applies
    full_sizes: dict[str, int]      # every size constant of the spec, overrides applied
    state_seed: int                 # seeds the Model's (and ModelNew's) parameters
    timing_seed: int                # seeds the timing platform's fresh inputs
    trials: list[Draw]
    recheck: list[Draw]             # drawn after timing, on inputs the candidate has not seen

    def draws(self, kind: Literal["trials", "recheck"]) -> list[Draw]:
        return self.trials if kind == "trials" else self.recheck


class PlanPlatform(BaseModel):
    """The platform's entry of kb/platforms.toml, as the children need it."""

    name: str
    description: str = ""
    kb_hardware: str = ""
    runner: str
    speed: str
    screen_on: str = ""
    machine_model: str = ""

    @classmethod
    def of(cls, platform: Platform) -> PlanPlatform:
        return cls(**asdict(platform))

    def resolved(self, machine_model: str) -> Platform:
        """The Platform with its machine model at ``machine_model`` (the child's copy)."""
        return Platform(**{**self.model_dump(), "machine_model": machine_model})  # type: ignore[arg-type]


class EvalPlan(_Document):
    """What both children of one evaluation run: written once by the worker, never patched."""

    device: str                     # "cuda" or "cpu"
    platform: PlanPlatform
    cases: list[PlanCase]
    # Set when the platform has a machine model: the worker copies it into the run's scratch
    # under this name (the child sees nothing outside its scratch).
    machine_model_file: str = ""
    # The job allows TF32: the candidate child's baselines (eager, torch.compile) use it. The
    # reference child never does: the outputs a kernel is judged against are full float32.
    allow_tf32: bool = False
    # The candidate child samples eager's and torch.compile's GPU time beside the candidate,
    # interleaved. False: its job's baselines were sampled once by a ``baselines`` child (no
    # candidate code in that process), and the candidate samples itself alone (its call loop
    # still runs all three).
    time_baselines: bool = True

    def write(self, work: Path) -> None:
        (work / PLAN_FILE).write_text(self.model_dump_json())

    @classmethod
    def load(cls, path: Path) -> EvalPlan:
        return cls.model_validate_json(path.read_text())

    def machine_model_in(self, work: Path) -> str:
        return str(work / self.machine_model_file) if self.machine_model_file else ""


class OutputShape(BaseModel):
    shape: list[int]
    dtype: str


class ReferenceCase(BaseModel):
    """What the reference run learned about one case."""

    bytes_moved: int = 0            # inputs + outputs of one call
    outputs: list[OutputShape] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # variants that fell back to raw data, degenerate outputs
    # What the spec itself declares for this case (its optional bytes_moved() and flops()
    # helpers, evaluated at the case's sizes); 0 when it declares none.
    declared_bytes: float = 0.0
    declared_flops: float = 0.0


class ReferenceResult(ChildStatus):
    """``reference.result.json``: cached with the reference outputs, per spec, sizes and seeds."""

    cases: dict[str, ReferenceCase] = Field(default_factory=dict)   # by case index, as a string


class CandidateResult(ChildStatus):
    """``candidate.result.json``: how the candidate process ended, what it timed and launched."""

    timings: dict[str, CaseTiming] = Field(default_factory=dict)    # by case index, as a string
    kernels: list[KernelLaunches] = Field(default_factory=list)
    environment: dict[str, str] = Field(default_factory=dict)
    phases_s: dict[str, float] = Field(default_factory=dict)


class BaselineResult(ChildStatus):
    """``baselines.result.json``: eager PyTorch's and torch.compile's GPU times sampled for every
    case of a job's plan by a process that loads only the spec (no candidate code can touch
    these numbers)."""

    timings: dict[str, CaseTiming] = Field(default_factory=dict)    # by case index, as a string


def result_file(mode: str) -> str:
    """Where the ``mode`` child ("reference", "baselines" or "candidate") writes its result."""
    return f"{mode}.result.json"
