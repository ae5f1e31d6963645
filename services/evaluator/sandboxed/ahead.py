"""Baselines built ahead of a request, by a GPU pool's spare child.

A spare (``zygote.py``) is forked while the request before it runs, and most requests a GPU
pool serves are candidates of one job. So the spare loads the spec of that request, builds
every case's reference model, compiles it with torch.compile and calls both once
(``child.build_ahead``), then waits. The request it runs next finds them here
(``reference_model``) when its spec, case, weights seed and TF32 setting are the same, copies
its own staged weights into them, and skips torch.compile's warm start: about a second of
every H100 evaluation's critical path.

A spare only ever runs a request whose spec is byte for byte the one it loaded (the zygote
retires it otherwise, before it reads the request), so no process runs a candidate beside
another job's spec code. Nothing is measured here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..protocol import PlanCase

# Reference modules built ahead of the request, by what they were built from.
_AHEAD: dict[tuple[str, int, tuple[tuple[str, int], ...], int, bool], torch.nn.Module] = {}


def spec_digest(source: bytes) -> str:
    return hashlib.sha256(source).hexdigest()


def _key(digest: str, case: PlanCase, tf32: bool) -> tuple[str, int, tuple[tuple[str, int], ...], int, bool]:
    return digest, case.index, tuple(sorted(case.sizes.items())), case.state_seed, tf32


def reference_model(spec: Any, case: PlanCase, work: Path, device: str, digest: str = "",
                    tf32: bool = False) -> Callable[[], torch.nn.Module]:
    """The spec's Model with the reference run's weights: what the baselines run. Taken from
    those built ahead when one matches (``digest``: the spec's ``spec_digest``; empty, never)."""

    def make_reference() -> torch.nn.Module:
        state = torch.load(work / "in" / str(case.index) / "state.pt", weights_only=True)
        built = _AHEAD.pop(_key(digest, case, tf32), None) if digest else None
        if built is not None:
            # This run's own weights, copied into the module in place: torch.compile's graph
            # of it reads its parameters at every call, so it stays valid.
            built.load_state_dict(state)
            return built
        torch.manual_seed(case.state_seed)
        ref = spec.Model(*spec.get_init_inputs())
        ref.load_state_dict(state)
        return ref.to(device).eval()

    return make_reference


def keep(digest: str, case: PlanCase, tf32: bool, reference: torch.nn.Module) -> None:
    """A reference built ahead, for the request that matches it."""
    _AHEAD[_key(digest, case, tf32)] = reference


def built_ahead() -> int:
    """How many reference models wait for their request."""
    return len(_AHEAD)
