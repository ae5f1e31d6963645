"""How a sandboxed child process reports how it ended: one envelope for all of them.

Every child that runs user code (the spec probe, the evaluator's reference and candidate
runs, the profiler's runs) writes one JSON document when it ends: ``status`` (``ok``,
``fail``, or ``stopped`` when its parent told it to stop), and on ``fail`` a
:class:`ChildFailure` saying where and why; each child's own results ride beside them in a
subclass. The parent reads it back with :meth:`ChildStatus.read`, and a missing or
unreadable document is the parent's signal that the child died before it could say.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, Self

from pydantic import BaseModel, ValidationError


class ChildFailure(BaseModel):
    """Why a child failed. ``verdict``/``decided_by`` are set by children that judge candidates
    (the evaluator's); ``where`` by those that run a sequence of user calls (the spec probe)."""

    reason: str
    where: str = ""
    verdict: str = ""
    decided_by: str = ""
    traceback: str = ""


class ChildStatus(BaseModel):
    status: Literal["ok", "fail", "stopped"] = "ok"
    failure: ChildFailure | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def write(self, path: Path) -> None:
        """Write atomically: the parent never reads half a document."""
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(self.model_dump_json())
        os.replace(tmp, path)

    @classmethod
    def read(cls, path: Path) -> Self | None:
        """The child's document, or None when it wrote none (it died) or wrote nonsense."""
        try:
            return cls.model_validate_json(path.read_text())
        except (OSError, ValidationError, ValueError):
            return None

    @classmethod
    def parse(cls, text: str) -> Self | None:
        """The last line of ``text`` that is this document (a child's stdout may carry other output)."""
        for line in reversed(text.strip().splitlines()):
            try:
                return cls.model_validate_json(line)
            except (ValidationError, ValueError):
                continue
        return None
