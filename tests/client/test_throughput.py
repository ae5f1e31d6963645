"""The throughput report's figures, from evaluation reports as the evaluator writes them."""

from __future__ import annotations

from pathlib import Path

from kevolve.client.throughput import summarize
from kevolve.reports import EvaluationReport
from kevolve.v1 import evaluation_pb2, job_pb2


def _report(start: float, seconds: float, gpu: tuple[float, float] | None, stage: str = "full") -> EvaluationReport:
    report = EvaluationReport(result=evaluation_pb2.EvaluationResult(stage=stage, duration_s=seconds,
                                                                       environment={"gpu": "H100", "junk": "x"}))
    report.result.worker = f"host:{int(start) % 2}" if stage != "confirm" else ""
    report.phases_s = {"reference": 0.5, "candidate_correctness": seconds - 1.0, "compare_recheck": 0.5}
    report.candidate_phases_s = {"import": 2.0, "trials": seconds - 3.0}
    if gpu:
        report.gpu_lock_window = [start + gpu[0], start + gpu[1]]
    report.finished_at = start + seconds
    return report


def test_candidates_per_minute_time_per_evaluation_phases_and_gpu_share() -> None:
    job = job_pb2.Job(job_id="j", platform="cuda", candidates=5, state=job_pb2.SUCCEEDED, updated_at=1060.0,
                      spec=job_pb2.KernelSpec(name="softmax"))
    reports = [_report(1000 + 10 * i, seconds, (4.0, 6.0)) for i, seconds in enumerate([4.0, 5.0, 6.0, 20.0])]
    reports.append(_report(1000, 1.0, None, stage="screen"))    # screening runs are not the GPU pool's
    summary = summarize(job, reports, first_candidate_at=1000.0)
    assert summary.evaluated == summary.judged == 4 and summary.wall_s == 60.0 and summary.per_minute == 4.0
    assert summary.eval_s_median == 5.5 and summary.eval_s_p95 == 20.0
    assert summary.gpu_busy == 8.0 / 60.0
    assert summary.phases_median_s == {"reference": 0.5, "candidate_correctness": 4.5, "compare_recheck": 0.5}
    assert summary.candidate_phases_median_s["import"] == 2.0 and summary.environment == {"gpu": "H100"}
    text = summary.markdown()
    assert "| candidates judged per minute | 4.00 |" in text and "| GPU busy (timing candidates and baselines) | 13.3% |" in text


def test_confirmation_runs_and_a_jobs_baselines_count_as_work_on_the_gpu() -> None:
    # Node a was a would-be best: its full-stage run and its confirmation are two evaluations
    # of one candidate; the first run of the job also timed the job's baselines.
    job = job_pb2.Job(job_id="j", platform="cuda", candidates=2, state=job_pb2.SUCCEEDED, updated_at=1060.0,
                      spec=job_pb2.KernelSpec(name="softmax"))
    first = _report(1000, 8.0, (5.0, 6.0))
    first.baseline_lock_window = [1002.0, 1004.0]
    confirm = _report(1020, 6.0, (4.0, 5.0), stage="confirm")
    other = _report(1030, 6.0, (4.0, 5.0))
    summary = summarize(job, [first, confirm, other], first_candidate_at=1000.0)
    assert (summary.judged, summary.evaluated, summary.confirmations) == (2, 3, 1)
    assert summary.per_minute == 2.0 and summary.evaluations_per_minute == 3.0
    assert summary.gpu_busy == (1.0 + 2.0 + 1.0 + 1.0) / 60.0
    assert "| evaluations (confirmation runs of would-be bests) | 3 (1) |" in summary.markdown()
    assert summary.workers == 1      # host:0 (the confirmation names none here)
    # Verdicts at 1008, 1026 and 1036: the first after 8 s, then 2 more in 28 s; those two
    # started (at 1020 and 1030) after it.
    assert summary.first_verdict_s == 8.0 and abs(summary.steady_evaluations_per_minute - 120 / 28) < 1e-9
    assert summary.steady_eval_s_median == 6.0 and summary.steady_eval_s_p95 == 6.0
    # Full-stage runs and confirmations apart: their counts, wall times and GPU lock times.
    assert summary.by_stage == {
        "full": {"evaluations": 2.0, "median_s": 7.0, "p95_s": 8.0, "gpu_lock_s": 1.0},
        "confirm": {"evaluations": 1.0, "median_s": 6.0, "p95_s": 6.0, "gpu_lock_s": 1.0}}
    assert "| confirm | 1 | 6.00 s / 6.00 s | 1.00 s |" in summary.markdown()


def test_a_confirmed_nodes_two_runs_are_compared_figure_by_figure() -> None:
    from kevolve.reports import CaseTiming

    def timed(stage: str, candidate_ms: float, compile_ms: float) -> EvaluationReport:
        report = _report(1000, 5.0, (1.0, 2.0), stage=stage)
        report.result.node_id = "n1"
        report.result.cases.add(name="default", candidate_ms=candidate_ms, compile_ms=compile_ms,
                                gpu_fitness=compile_ms / candidate_ms)
        report.timing = {"0": CaseTiming(candidate_ms=candidate_ms, compile_ms=compile_ms, cv=0.01,
                                         extra={"compile_cv": 0.02})}
        return report

    job = job_pb2.Job(job_id="j", platform="cuda", candidates=1, state=job_pb2.SUCCEEDED, updated_at=1060.0,
                      spec=job_pb2.KernelSpec(name="softmax"))
    summary = summarize(job, [timed("full", 0.105, 0.2), timed("confirm", 0.1, 0.2)], first_candidate_at=1000.0)
    assert summary.agreement["candidate_ms"]["pairs"] == 1
    assert abs(summary.agreement["candidate_ms"]["median"] - 0.05) < 1e-9
    assert summary.agreement["compile_ms"]["max"] == 0.0
    assert summary.agreement["cv (compile, within a run)"]["median"] == 0.02
    assert "| candidate_ms | 1 | 5.0% | 5.0% |" in summary.markdown()


def test_measure_reads_each_evaluation_once_and_counts_duplicates_apart() -> None:
    # Three candidates: n0 confirmed (two reports), n1 judged once, n2 the same code as n1 (the
    # controller reused n1's verdict: its report key is n1's and no evaluation ran for it).
    from kevolve.client.throughput import measure
    from kevolve.v1 import common_pb2

    stored = {"r0": _report(1000, 6.0, (1.0, 2.0)), "r0c": _report(1010, 6.0, (1.0, 2.0), stage="confirm"),
              "r1": _report(1020, 6.0, (1.0, 2.0))}
    nodes = [job_pb2.Candidate(node_id="n0", verdict=common_pb2.PASSED, eval_report_key="r0c", full_report_key="r0",
                               created_at=1000.0),
             job_pb2.Candidate(node_id="n1", verdict=common_pb2.PASSED, eval_report_key="r1", created_at=1001.0),
             job_pb2.Candidate(node_id="n2", verdict=common_pb2.PASSED, eval_report_key="r1", created_at=1002.0,
                               decided_by="dedupe:n1")]

    class Client:
        def submit(self, spec, platform, config):  # type: ignore[no-untyped-def]
            return job_pb2.Job(job_id="j", platform=platform, candidates=3, state=job_pb2.SUCCEEDED,
                               updated_at=1030.0, spec=job_pb2.KernelSpec(name="softmax"))

        def candidates(self, job_id):  # type: ignore[no-untyped-def]
            return nodes

        def artifact(self, job_id, key):  # type: ignore[no-untyped-def]
            return stored[key].model_dump_json().encode()

    summary = measure(Client(), Path("softmax.py"), "cuda", 3, 1, 60.0)  # type: ignore[arg-type]
    assert (summary.candidates, summary.judged, summary.evaluated, summary.confirmations) == (3, 2, 3, 1)
    assert summary.duplicates == 1


def test_the_pipeline_shows_where_a_candidates_time_goes() -> None:
    # Four expansions in flight, two candidates judged per 10 s at steady pace: an expansion
    # takes 4 / (12 per minute) = 20 s. Each candidate waited 1 s for screening, screened in
    # 2 s, waited 3 s for the pool and ran 4 s there: 10 s from creation to verdict, so the
    # other 10 s went before its candidate existed (generation).
    from kevolve.client.throughput import pipeline

    created, screens, runs = {}, {}, {}
    for i in range(3):
        t = 100.0 + 5 * i
        created[f"n{i}"] = t
        screens[f"n{i}"] = _report(t + 1, 2.0, None, stage="screen")
        runs[f"n{i}"] = _report(t + 6, 4.0, (1.0, 2.0))
    created["early"] = 50.0                     # the first wave, before the first verdict: left out
    runs["early"] = _report(90.0, 4.0, (1.0, 2.0))
    rows = pipeline(created, screens, runs, parallelism=4, per_minute=12.0, since=100.0)
    assert rows == {"created to screening": 1.0, "screening run": 2.0, "screened to the pool": 3.0,
                    "pool run": 4.0, "created to verdict, mean": 10.0,
                    "before the candidate exists, mean (derived)": 10.0}
