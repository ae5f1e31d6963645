"""What the profiler and its sandboxed child exchange: one plan per child run, written
complete, and the child's observations in the common child-status envelope."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from kevolve.exec.childstatus import ChildStatus

Mode = Literal["interp", "torch", "ncu_target"]


class ProfilePlan(BaseModel):
    """One child run: what to load, at which sizes, how to observe it, where to write."""

    mode: Mode                      # interp (interpreter trace), torch (torch.profiler), ncu_target
    out: str                        # where the child writes its Observation
    spec_path: str
    candidate_path: str = ""        # empty: profile the reference
    seed: int = 0
    sizes: dict[str, int] = Field(default_factory=dict)
    iterations: int = 20
    machine_model: str = ""         # a simulated platform's machine model (a copy in the scratch)

    def write(self, path: Path) -> None:
        path.write_text(self.model_dump_json())


class Observation(ChildStatus):
    """What the child observed: tool specific (launch traces, kernel times...), read by analysis.py."""

    observed: dict[str, Any] = Field(default_factory=dict)
