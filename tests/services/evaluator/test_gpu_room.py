"""The evaluator's GPU memory reservations: what a run is expected to hold, GPU jobs waiting
for room on a full budget, and CPU jobs or a budget of 0 never reserving."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from evaluator_helpers import FIXTURES, cpu_job

from kevolve.config import REPO_ROOT
from kevolve.platforms import get_platform
from services.evaluator.config import EvaluatorSettings
from services.evaluator.gpu_room import GPU_OVERHEAD, GpuRoom, gpu_bytes
from services.evaluator.plan import EvalJob
from services.evaluator.protocol import EvalPlan

MB = 2**20
SPEC = FIXTURES / "specs" / "softmax_small.py"
CANDIDATE = FIXTURES / "kernels" / "correct" / "softmax_rowwise.py"


def _gpu_job() -> EvalJob:
    return EvalJob(spec_source=SPEC.read_text(), candidate_source=CANDIDATE.read_text(),
                   platform=get_platform(REPO_ROOT / "kb", "cuda"))


def _settings(tmp_path: Path, budget_mb: int) -> EvaluatorSettings:
    return EvaluatorSettings(platform="cuda", scratch_dir=tmp_path / "scratch", gpu_lock_dir=tmp_path / "locks",
                             gpu_memory_mb=budget_mb, gpu_memory_wait_s=60)


def test_a_run_is_expected_to_hold_its_weights_one_trial_and_its_outputs_thrice(tmp_path: Path) -> None:
    sizes = {"state.pt": 10, "inputs_trials0.pt": 30, "inputs_trials1.pt": 31, "expected_trials0.pt": 7,
             "expected_recheck0.pt": 8}
    for index, scale in ((0, 1), (1, 2)):  # the larger case decides
        case = tmp_path / "ref" / str(index)
        case.mkdir(parents=True)
        for name, mb in sizes.items():
            (case / name).write_bytes(b"\0" * (mb * scale * MB // 16))
    plan = EvalPlan.model_construct(cases=[type("Case", (), {"index": 0})(), type("Case", (), {"index": 1})()])
    expected = (10 + 2 * 31 + 3 * 8) * 2 * MB // 16
    assert gpu_bytes(plan, tmp_path) == expected + GPU_OVERHEAD


def test_gpu_jobs_wait_for_room_and_cpu_jobs_never_reserve(tmp_path: Path) -> None:
    room = GpuRoom(_settings(tmp_path, budget_mb=1000))
    ledger = room.ledger()
    assert ledger is not None and ledger.budget == 1000 * MB
    order: list[str] = []
    with room.hold(_gpu_job(), lambda budget: 700 * MB):
        waiter = threading.Thread(target=lambda: _hold_and_note(room, order))
        waiter.start()
        with room.hold(cpu_job(SPEC, CANDIDATE), lambda budget: 10_000 * MB):  # a CPU job: no wait
            order.append("cpu ran")
        time.sleep(0.4)
        order.append("first done")
    waiter.join(timeout=10)
    assert order == ["cpu ran", "first done", "second ran"]
    assert ledger.in_use() == 0


def _hold_and_note(room: GpuRoom, order: list[str]) -> None:
    with room.hold(_gpu_job(), lambda budget: budget // 2):  # 500 + 700 MB do not fit 1000
        order.append("second ran")


def test_a_budget_of_zero_turns_reservations_off(tmp_path: Path) -> None:
    room = GpuRoom(_settings(tmp_path, budget_mb=0))
    assert room.ledger() is None
    with room.hold(_gpu_job(), lambda budget: 10**12):
        pass
