"""A run's outputs compared as the child saves them: in order, each once, the first
disagreement kept, a missing or unreadable file the candidate's failure."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from evaluator_helpers import FIXTURES, cpu_job

from kevolve.specfile import check_outline
from services.evaluator.plan import build_plan
from services.evaluator.protocol import Draw, EvalPlan, PlanCase
from services.evaluator.saved_outputs import OutputComparer


def _plan(trials: int) -> EvalPlan:
    """A one-case plan as the worker builds it, with ``trials`` trial draws."""
    spec = FIXTURES / "specs" / "softmax_small.py"
    built = dict(build_plan(cpu_job(spec, spec), check_outline(spec.read_text())))
    case = PlanCase.model_validate(built["cases"][0]).model_copy(
        update={"index": 0, "trials": [Draw(seed=i, variant="raw") for i in range(trials)], "recheck": []})
    return EvalPlan.model_validate({**built, "cases": [case.model_dump()]})


def _dirs(tmp_path: Path, expected: list[torch.Tensor]) -> tuple[Path, Path]:
    ref, work = tmp_path / "refdir", tmp_path / "work"
    (ref / "ref" / "0").mkdir(parents=True)
    (work / "out" / "0").mkdir(parents=True)
    for i, t in enumerate(expected):
        torch.save([t], ref / "ref" / "0" / f"expected_trials{i}.pt")
    return ref, work


def test_outputs_are_compared_as_they_arrive_and_the_set_ends_on_the_last(tmp_path: Path) -> None:
    expected = [torch.full((64,), float(i)) for i in range(3)]
    ref, work = _dirs(tmp_path, expected)
    comparer = OutputComparer(_plan(3), ref, work, "trials", atol=0.0, rtol=0.0)
    assert comparer.advance() is False and comparer.errors == {}     # nothing saved yet
    torch.save([expected[0] + 1e-6], work / "out" / "0" / "trials0.pt")
    assert comparer.advance() is False
    assert comparer.errors[0]["max_abs_error"] > 0                   # the first is compared already
    for i in (1, 2):
        torch.save([expected[i]], work / "out" / "0" / f"trials{i}.pt")
    assert comparer.advance() is True and comparer.problem is None and comparer.total == 3
    # Each file goes once compared: a run holds one set of outputs on the scratch disk, not seven.
    assert not list((work / "out" / "0").iterdir())


def test_the_first_disagreement_is_kept_and_names_its_trial(tmp_path: Path) -> None:
    expected = [torch.zeros(64), torch.zeros(64)]
    ref, work = _dirs(tmp_path, expected)
    torch.save([torch.zeros(64)], work / "out" / "0" / "trials0.pt")
    torch.save([torch.ones(64)], work / "out" / "0" / "trials1.pt")
    comparer = OutputComparer(_plan(2), ref, work, "trials", atol=0.0, rtol=0.0)
    assert comparer.advance() is True
    assert comparer.problem is not None and comparer.problem.verdict == "INCORRECT"
    assert "trials 1" in comparer.problem.reason and comparer.problem.mismatch["trial"] == 1


def test_a_missing_or_unreadable_output_is_the_candidates_failure(tmp_path: Path) -> None:
    ref, work = _dirs(tmp_path, [torch.zeros(8), torch.zeros(8)])
    torch.save([torch.zeros(8)], work / "out" / "0" / "trials0.pt")
    comparer = OutputComparer(_plan(2), ref, work, "trials", atol=0.0, rtol=0.0)
    comparer.finish()                  # the child said it was done: trials1 never came
    assert comparer.problem is not None and comparer.problem.decided_by == "runtime:output_file"
    torch.save([torch.zeros(8)], work / "out" / "0" / "trials0.pt")  # compared, so removed: again
    (work / "out" / "0" / "trials1.pt").write_bytes(b"not a tensor file")
    again = OutputComparer(_plan(2), ref, work, "trials", atol=0.0, rtol=0.0)
    again.finish()
    assert again.problem is not None and again.problem.decided_by == "runtime:output_file"


def test_an_outputs_file_the_full_scratch_disk_refused_is_not_the_candidates_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child writes its outputs to the pool's shared scratch disk: when a write runs out of
    room (torch.save's zip writer says so as an iostream error), the run is an infrastructure
    failure the controller retries, never an error charged to the candidate."""
    from services.evaluator.sandboxed import child

    def refuse(values: object, path: object) -> None:
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598")

    monkeypatch.setattr(child.torch, "save", refuse)
    with pytest.raises(child.ScratchFull) as caught:
        child._save([torch.zeros(4)], tmp_path / "trials0.pt")
    failure = child._classify(caught.value)
    assert failure.verdict == "INFRA_ERROR" and failure.decided_by == "infra:disk"
    assert "scratch disk is full" in failure.reason and not list(tmp_path.iterdir())


def test_a_gpu_too_full_for_the_comparison_sends_it_to_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's own out-of-memory error (a GPU its candidates filled, before the allocator
    is involved) moves the comparison to the host like the allocator's, with the same result;
    another driver error is not hidden."""
    from services.evaluator import saved_outputs

    real = saved_outputs.compare
    failure = {"error": getattr(torch, "AcceleratorError", RuntimeError)("CUDA error: out of memory")}

    def gpu_full(expected, got, atol, rtol, device="cpu"):  # type: ignore[no-untyped-def]
        if device != "cpu":
            raise failure["error"]
        return real(expected, got, atol, rtol)

    monkeypatch.setattr(saved_outputs, "compare", gpu_full)
    expected = [torch.zeros(16), torch.ones(16)]
    ref, work = _dirs(tmp_path, expected)
    for i, t in enumerate(expected):
        torch.save([t], work / "out" / "0" / f"trials{i}.pt")
    comparer = OutputComparer(_plan(2), ref, work, "trials", atol=0.0, rtol=0.0, device="cuda")
    assert comparer.advance() is True and comparer.problem is None
    failure["error"] = getattr(torch, "AcceleratorError", RuntimeError)("CUDA error: an illegal memory access")
    ref, work = _dirs(tmp_path / "again", expected)
    torch.save([expected[0]], work / "out" / "0" / "trials0.pt")
    with pytest.raises(RuntimeError, match="illegal memory access"):
        OutputComparer(_plan(2), ref, work, "trials", atol=0.0, rtol=0.0, device="cuda").advance()
