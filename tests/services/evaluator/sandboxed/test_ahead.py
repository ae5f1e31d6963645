"""Baselines built ahead of a request (a GPU pool's spare builds them): a request takes one only
when it was built from the very same spec, case and TF32 setting, and always with its own run's
weights in it."""

from __future__ import annotations

from pathlib import Path

import torch

from kevolve.specfile import load_module
from services.evaluator.protocol import PlanCase
from services.evaluator.sandboxed import ahead

SPEC = """
import torch
N = 8

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(N, N)

    def forward(self, x):
        return self.lin(x)

def get_inputs():
    return [torch.randn(4, N)]

def get_init_inputs():
    return []
"""


def _case(index: int = 0, n: int = 8) -> PlanCase:
    return PlanCase(index=index, name=f"case{index}", sizes={"N": n}, full_sizes={"N": n}, state_seed=3,
                    timing_seed=4, trials=[], recheck=[])


def _staged(work: Path, case: PlanCase, fill: float) -> dict[str, torch.Tensor]:
    state = {"lin.weight": torch.full((8, 8), fill), "lin.bias": torch.full((8,), fill)}
    (work / "in" / str(case.index)).mkdir(parents=True, exist_ok=True)
    torch.save(state, work / "in" / str(case.index) / "state.pt")
    return state


def test_a_request_of_the_same_spec_takes_the_model_built_ahead_with_its_own_weights(tmp_path: Path) -> None:
    case, spec = _case(), load_module(SPEC, "kv_spec_ahead", {"N": 8})
    digest = ahead.spec_digest(SPEC.encode())
    spare_run, own_run = tmp_path / "spare", tmp_path / "own"
    _staged(spare_run, case, 1.0)
    built = ahead.reference_model(spec, case, spare_run, "cpu")()
    ahead.keep(digest, case, False, built)
    assert ahead.built_ahead() == 1
    state = _staged(own_run, case, 2.0)              # this run's reference weights differ
    taken = ahead.reference_model(spec, case, own_run, "cpu", digest, False)()
    assert taken is built and ahead.built_ahead() == 0
    assert torch.equal(taken.lin.weight, state["lin.weight"]) and torch.equal(taken.lin.bias, state["lin.bias"])
    # Taken once: the next request builds its own.
    assert ahead.reference_model(spec, case, own_run, "cpu", digest, False)() is not built


def test_a_request_of_another_spec_case_or_precision_builds_its_own(tmp_path: Path) -> None:
    case, spec = _case(), load_module(SPEC, "kv_spec_ahead", {"N": 8})
    digest = ahead.spec_digest(SPEC.encode())
    _staged(tmp_path, case, 1.0)
    built = ahead.reference_model(spec, case, tmp_path, "cpu")()
    try:
        ahead.keep(digest, case, False, built)
        other_case = _case(index=1)
        _staged(tmp_path, other_case, 1.0)
        for make in (
            ahead.reference_model(spec, case, tmp_path, "cpu", ahead.spec_digest(b"another spec"), False),
            ahead.reference_model(spec, case, tmp_path, "cpu", digest, True),    # TF32 allowed
            ahead.reference_model(spec, other_case, tmp_path, "cpu", digest, False),
            ahead.reference_model(spec, case, tmp_path, "cpu"),                  # no digest: never
        ):
            assert make() is not built
        assert ahead.built_ahead() == 1
    finally:
        ahead._AHEAD.clear()
