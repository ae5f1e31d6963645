"""What the spec probe's processes write back: the child's status and the helper's report.

The child (``spec_child``, inside the sandbox) writes a :class:`ProbeChildResult` to its
scratch; the helper (``spec_sandbox``, outside it) reads that and prints one
:class:`ProbeReport` line: how the sandboxed run ended, with the child's result in it.
"""

from __future__ import annotations

from pydantic import BaseModel

from kevolve.exec.childstatus import ChildStatus

RESULT_FILE = "probe.result.json"   # in the probe's scratch directory


class ProbeChildResult(ChildStatus):
    """``ok``: the spec imported, built its Model and returned ``inputs`` inputs; ``fail``: the
    failure says at which step (``where``) and with which error."""

    inputs: int = 0
    # Sizes derived for screening when the spec and the request name none ({}: none needed
    # or none found); the probe ran at them.
    screening_sizes: dict[str, int] = {}


class ProbeReport(BaseModel):
    """The helper's one line: the sandboxed run's end and the child's result, if it wrote one."""

    unavailable: str = ""             # the sandbox could not run here (isolation required)
    killed_for: str = ""              # "timeout", "memory", "procs" or ""
    returncode: int | None = None
    duration_s: float = 0.0
    log_tail: str = ""
    mode: str = ""
    child: ProbeChildResult | None = None
