"""The throughput report's figures, from evaluation reports as the evaluator writes them."""

from __future__ import annotations

from kevolve.client.throughput import summarize
from kevolve.reports import EvaluationReport
from kevolve.v1 import evaluation_pb2, job_pb2


def _report(start: float, seconds: float, gpu: tuple[float, float] | None, stage: str = "full") -> EvaluationReport:
    report = EvaluationReport(result=evaluation_pb2.EvaluationResult(stage=stage, duration_s=seconds,
                                                                       environment={"gpu": "H100", "junk": "x"}))
    report.phases_s = {"reference": 0.5, "candidate_correctness": seconds - 1.0, "compare_recheck": 0.5}
    report.candidate_phases_s = {"import": 2.0, "trials": seconds - 3.0}
    if gpu:
        report.gpu_lock_window = [start + gpu[0], start + gpu[1]]
    return report


def test_candidates_per_minute_time_per_evaluation_phases_and_gpu_share() -> None:
    job = job_pb2.Job(job_id="j", platform="cuda", candidates=5, state=job_pb2.SUCCEEDED, updated_at=1060.0,
                      spec=job_pb2.KernelSpec(name="softmax"))
    reports = [_report(1000 + 10 * i, seconds, (4.0, 6.0)) for i, seconds in enumerate([4.0, 5.0, 6.0, 20.0])]
    reports.append(_report(1000, 1.0, None, stage="screen"))    # screening runs are not the GPU pool's
    summary = summarize(job, reports, first_candidate_at=1000.0)
    assert summary.evaluated == 4 and summary.wall_s == 60.0 and summary.per_minute == 4.0
    assert summary.eval_s_median == 5.5 and summary.eval_s_p95 == 20.0
    assert summary.gpu_busy == 8.0 / 60.0
    assert summary.phases_median_s == {"reference": 0.5, "candidate_correctness": 4.5, "compare_recheck": 0.5}
    assert summary.candidate_phases_median_s["import"] == 2.0 and summary.environment == {"gpu": "H100"}
    text = summary.markdown()
    assert "| candidates judged per minute | 4.00 |" in text and "| GPU busy (timing candidates) | 13.3% |" in text
