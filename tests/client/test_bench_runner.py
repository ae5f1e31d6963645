"""`kevolve bench` against a real gRPC JobService (a scripted servicer): submit, follow, collect, report."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
import typer
from google.protobuf.json_format import MessageToDict
from typer.testing import CliRunner

from kevolve.client import bench
from kevolve.client.bench import register, render_from_json, run_bench, spec_cost
from kevolve.config import REPO_ROOT
from kevolve.v1 import common_pb2, evaluation_pb2, job_pb2, service_pb2, service_pb2_grpc

SUITE = REPO_ROOT / "bench" / "suite"
ONLY = ["softmax_fp16", "rmsnorm_fp16", "row_max_fp16"]


class ScriptedJobService(service_pb2_grpc.JobServiceServicer):
    """Jobs end after two polls; row_max finds no correct kernel; rmsnorm's kernel is slower than compile."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.jobs: dict[str, job_pb2.Job] = {}
        self.polls: dict[str, int] = {}
        self.submitted: list[service_pb2.SubmitJobRequest] = []
        self.lock = threading.Lock()

    def _auth(self, context: grpc.ServicerContext) -> None:
        if dict(context.invocation_metadata()).get("authorization") != f"Bearer {self.token}":
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "bad token")

    def SubmitJob(self, request: service_pb2.SubmitJobRequest, context: grpc.ServicerContext
                  ) -> service_pb2.SubmitJobResponse:
        self._auth(context)
        with self.lock:
            self.submitted.append(request)
            job_id = f"job{len(self.jobs)}-{request.spec.name}"
            job = job_pb2.Job(job_id=job_id, spec=request.spec, platform=request.platform,
                              config=request.config, state=job_pb2.RUNNING, fitness_is_speed=True)
            self.jobs[job_id] = job
            self.polls[job_id] = 0
        return service_pb2.SubmitJobResponse(job=job)

    def GetJob(self, request: service_pb2.GetJobRequest, context: grpc.ServicerContext
               ) -> service_pb2.GetJobResponse:
        self._auth(context)
        with self.lock:
            job = self.jobs[request.job_id]
            self.polls[request.job_id] += 1
            if self.polls[request.job_id] >= 2 and job.state == job_pb2.RUNNING:
                failing = job.spec.name == "row_max_fp16"
                job.state = job_pb2.FAILED if failing else job_pb2.SUCCEEDED
                job.end_reason = "budget exhausted" if failing else "target reached"
                job.candidates, job.evaluated, job.passed = 6, 6, 0 if failing else 2
                job.usage.prompt_tokens, job.usage.completion_tokens, job.usage.cost_usd = 100, 50, 0.01
                job.best_node_id = "" if failing else "n1"
        return service_pb2.GetJobResponse(job=job)

    def GetBestKernel(self, request: service_pb2.GetBestKernelRequest, context: grpc.ServicerContext
                      ) -> service_pb2.GetBestKernelResponse:
        cand = job_pb2.Candidate(node_id="n1", job_id=request.job_id, verdict=common_pb2.PASSED,
                                 eval_report_key="reports/eval/best.json")
        return service_pb2.GetBestKernelResponse(candidate=cand, code="# kernel", platform="cuda")

    def ListCandidates(self, request: service_pb2.ListCandidatesRequest, context: grpc.ServicerContext
                       ) -> service_pb2.ListCandidatesResponse:
        nodes = [job_pb2.Candidate(node_id="n0", eval_report_key="reports/eval/screen.json",
                                   verdict=common_pb2.INCORRECT, reason="max abs error 0.5 in case cpu"),
                 job_pb2.Candidate(node_id="n1", eval_report_key="reports/eval/best.json",
                                   verdict=common_pb2.INCORRECT, reason="max abs error 0.5 in case cpu"),
                 job_pb2.Candidate(node_id="n2", verdict=common_pb2.NO_CODE,
                                   reason="offline: unrecognized spec")]  # not evaluated: no report
        return service_pb2.ListCandidatesResponse(candidates=nodes)

    def GetArtifact(self, request: service_pb2.GetArtifactRequest, context: grpc.ServicerContext
                    ) -> service_pb2.GetArtifactResponse:
        spec = self.jobs[request.job_id].spec.name
        if request.key.endswith("screen.json"):  # the cpu screening stage: not device time
            result = evaluation_pb2.EvaluationResult(platform="cpu", stage="screen", duration_s=9.0)
        else:
            slow = spec == "rmsnorm_fp16"
            sizes = {"rows": 8192, "cols": 4096} if spec == "softmax_fp16" else {"rows": 8192, "hidden": 4096}
            # The evaluator's reference run records what the spec declares at each case's sizes.
            declared = {name: spec_cost(SUITE / f"{spec}.py", s) for name, s in
                        (("small", {k: 16 for k in sizes}), ("default", sizes))}
            cases = [evaluation_pb2.CaseResult(name="small", sizes={k: 16 for k in sizes}, passed=True,
                                               candidate_ms=0.01, eager_ms=0.01, compile_ms=0.01,
                                               declared_bytes=declared["small"][0], flops=declared["small"][1]),
                     evaluation_pb2.CaseResult(name="default", sizes=sizes, passed=True,
                                               candidate_ms=0.12 if slow else 0.05, eager_ms=0.11,
                                               compile_ms=0.082, bytes_moved=123.0,
                                               declared_bytes=declared["default"][0], flops=declared["default"][1])]
            result = evaluation_pb2.EvaluationResult(platform="cuda", stage="full", verdict=common_pb2.PASSED,
                                                     cases=cases, speed_measured=True, duration_s=1.5,
                                                     environment={"gpu": "Scripted GPU"})
            # The CUDA timer's report: host issue times of the production case (index 1).
            timing = {"1": {"extra": {"candidate_host_ms": 0.031, "compile_host_ms": 0.045}}}
            return service_pb2.GetArtifactResponse(
                data=json.dumps({"result": MessageToDict(result), "timing": timing}).encode())
        return service_pb2.GetArtifactResponse(data=json.dumps({"result": MessageToDict(result)}).encode())


@pytest.fixture
def service() -> Iterator[tuple[ScriptedJobService, str]]:
    servicer = ScriptedJobService(token="s3cret")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    service_pb2_grpc.add_JobServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, f"127.0.0.1:{port}"
    server.stop(grace=None)


Service = tuple[ScriptedJobService, str]


def test_bench_runs_each_spec_as_a_job_and_reports(service: Service, tmp_path: Path) -> None:
    servicer, target = service
    result = run_bench(SUITE, "cuda", budget=7, out_dir=tmp_path, grpc_target=target, token="s3cret",
                       policy="mcts", parallel_jobs=3, only=ONLY, copy_bw_gbs=3000.0, poll_s=0.01)
    assert sorted(r.spec.name for r in servicer.submitted) == sorted(ONLY)
    sent = servicer.submitted[0]
    assert sent.platform == "cuda" and sent.config.budget == 7 and sent.config.policy == job_pb2.MCTS
    assert sent.spec.source == (SUITE / f"{sent.spec.name}.py").read_text()

    by_name = {s.spec: s for s in result.specs}
    soft = by_name["softmax_fp16"]
    assert soft.correct and soft.state == "SUCCEEDED" and soft.best_verdict == "PASSED"
    assert soft.main_case == "default"                       # the production sizes, not the first case
    main = soft.main()
    assert main is not None and main.sizes == {"rows": 8192, "cols": 4096}
    # The spec's minimal-traffic formula at those sizes, not the evaluator's own figure (123).
    assert main.bytes_moved == 2 * 8192 * 4096 * 2 and main.flops == 5 * 8192 * 4096
    assert soft.device_s == pytest.approx(1.5)              # the cpu screening stage is not device time
    assert soft.candidates == 6 and soft.prompt_tokens == 100
    assert not by_name["row_max_fp16"].correct and by_name["row_max_fp16"].state == "FAILED"
    assert result.device == "Scripted GPU"

    md = (tmp_path / "suite_cuda.md").read_text()
    assert "| `softmax_fp16` | yes (PASSED) | 0.11 | 0.082 | 0.05 | 2.20x | 1.64x | 89% |" in md
    assert "falls back to PyTorch (best kernel 0.12 ms is not faster than torch.compile 0.082 ms)" in md
    # Why no kernel is correct comes from the job's own candidates.
    assert ("falls back to PyTorch (no correct kernel: budget exhausted; 2 INCORRECT, 1 NO_CODE; "
            "most often: max abs error 0.5 in case cpu)") in md
    assert "<svg" in (tmp_path / "suite_cuda.html").read_text()
    # GPU times in the table, the host's issue time beside them (and only for the case that has one).
    assert "| `softmax_fp16` | default | cols=4096, rows=8192 | yes | 0.11 | 0.082 | 0.05 | 1.64x | kernel | 0.031 / 0.045 |" in md
    assert "| `softmax_fp16` | small | cols=16, rows=16 | yes | 0.01 | 0.01 | 0.01 | 1.00x | PyTorch (fallback) | – / – |" in md

    # The saved JSON re-renders to the same report, here or on any machine.
    out = tmp_path / "again"
    render_from_json(tmp_path / "suite_cuda.json", out)
    assert (out / "suite_cuda.md").read_text() == md


def test_bad_token_is_reported_per_spec_not_raised(service: Service, tmp_path: Path) -> None:
    _, target = service
    result = run_bench(SUITE, "cpu", budget=2, out_dir=tmp_path, grpc_target=target, token="wrong",
                       only=["softmax_fp16"], poll_s=0.01)
    spec = result.specs[0]
    assert spec.state == "NOT_RUN" and "UNAUTHENTICATED" in spec.error
    md = (tmp_path / "suite_cpu.md").read_text()
    assert "falls back to PyTorch (not run: SubmitJob: UNAUTHENTICATED: bad token)" in md


def test_cli_rerenders_from_json(service: Service, tmp_path: Path) -> None:
    _, target = service
    run_bench(SUITE, "cuda", budget=3, out_dir=tmp_path, grpc_target=target, token="s3cret",
              only=["softmax_fp16"], copy_bw_gbs=3000.0, poll_s=0.01)
    app = typer.Typer()
    register(app)

    @app.command()
    def _other() -> None:  # a second command, so typer keeps `bench` as a subcommand name
        pass

    out = tmp_path / "rendered"
    reply = CliRunner().invoke(app, ["bench", "--from-json", str(tmp_path / "suite_cuda.json"),
                                     "--out", str(out), "--copy-bw-gbs", "2000"])
    assert reply.exit_code == 0, reply.output
    # A new bandwidth re-derives the fractions: 134 MB in 0.05 ms over 2000 GB/s is 134%.
    assert "| 134% |" in (out / "suite_cuda.md").read_text()
    bad = CliRunner().invoke(app, ["bench", "--from-json", str(tmp_path / "missing.json")])
    assert bad.exit_code == 1 and "error" in bad.output


def test_runs_of_parts_of_the_suite_merge_into_one_report(service: Service, tmp_path: Path) -> None:
    # The suite may run in parts (--only), each with its own report, and the parts merge
    # into one; a spec run twice keeps its later result.
    _, target = service
    first, second = tmp_path / "a", tmp_path / "b"
    run_bench(SUITE, "cuda", budget=3, out_dir=first, grpc_target=target, token="s3cret",
              only=["softmax_fp16", "rmsnorm_fp16"], copy_bw_gbs=3000.0, poll_s=0.01)
    run_bench(SUITE, "cuda", budget=3, out_dir=second, grpc_target=target, token="s3cret",
              only=["rmsnorm_fp16", "row_max_fp16"], copy_bw_gbs=3000.0, poll_s=0.01)
    app = typer.Typer()
    register(app)

    @app.command()
    def _other() -> None:
        pass

    out = tmp_path / "merged"
    reply = CliRunner().invoke(app, ["bench", "--from-json", str(first / "suite_cuda.json"), "--from-json",
                                     str(second / "suite_cuda.json"), "--out", str(out), "--stem", "suite_all"])
    assert reply.exit_code == 0, reply.output
    merged = json.loads((out / "suite_all.json").read_text())
    assert [s["spec"] for s in merged["specs"]] == ["rmsnorm_fp16", "row_max_fp16", "softmax_fp16"]
    rms = next(s for s in merged["specs"] if s["spec"] == "rmsnorm_fp16")
    assert rms["job_id"] == json.loads((second / "suite_cuda.json").read_text())["specs"][0]["job_id"]
    md = (out / "suite_all.md").read_text()
    assert "environment: gpu Scripted GPU" in md and "| specs | 3 |" in md

    other_budget = tmp_path / "c"
    run_bench(SUITE, "cuda", budget=5, out_dir=other_budget, grpc_target=target, token="s3cret",
              only=["softmax_fp16"], copy_bw_gbs=3000.0, poll_s=0.01)
    bad = CliRunner().invoke(app, ["bench", "--from-json", str(first / "suite_cuda.json"), "--from-json",
                                   str(other_budget / "suite_cuda.json"), "--out", str(out)])
    assert bad.exit_code == 1 and "different budget" in bad.output


def test_the_report_is_rewritten_as_each_spec_ends(service: Service, tmp_path: Path) -> None:
    _, target = service
    seen: list[int] = []

    def progress(_: str) -> None:
        path = tmp_path / "suite_cuda.json"
        seen.append(len(json.loads(path.read_text())["specs"]) if path.exists() else 0)

    run_bench(SUITE, "cuda", budget=3, out_dir=tmp_path, grpc_target=target, token="s3cret", only=ONLY,
              parallel_jobs=1, copy_bw_gbs=3000.0, poll_s=0.01, on_progress=progress)
    # Progress is reported just before each spec is written: 0, 1, 2 specs on disk by then.
    assert seen == [0, 1, 2]


class RateLimitedJobService(ScriptedJobService):
    """Refuses the first submits as the controller does when a tenant is over its submit rate."""

    def __init__(self, token: str, refusals: int, message: str) -> None:
        super().__init__(token)
        self.refusals = refusals
        self.message = message

    def SubmitJob(self, request: service_pb2.SubmitJobRequest, context: grpc.ServicerContext
                  ) -> service_pb2.SubmitJobResponse:
        with self.lock:
            refuse = self.refusals > 0
            self.refusals -= 1
        if refuse:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, self.message)
        return super().SubmitJob(request, context)


@pytest.mark.parametrize("message", [
    "tenant 'default' is over its submit rate (10 at once, then 30 a minute); retry in 0.1s",
    # A limit with no wait named: the runner waits its own while the probes end.
    "2 spec probes of tenant 'default' are running and none finished within 30s "
    "(KEVOLVE_CONTROLLER_SPEC_PROBES_PER_TENANT=2); retry when they end",
])
def test_submits_turned_away_for_a_limit_are_retried_and_a_list_file_names_the_specs(
        tmp_path: Path, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "RETRY_S", 0.05)
    servicer = RateLimitedJobService(token="s3cret", refusals=4, message=message)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    service_pb2_grpc.add_JobServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        listing = tmp_path / "slice.txt"
        listing.write_text("# a slice of the suite\n" + "".join(f"{SUITE}/{name}.py\n" for name in ONLY))
        result = run_bench(listing, "cuda", budget=2, out_dir=tmp_path, grpc_target=f"127.0.0.1:{port}",
                           token="s3cret", parallel_jobs=3, copy_bw_gbs=3000.0, poll_s=0.01)
    finally:
        server.stop(grace=None)
    assert sorted(s.spec for s in result.specs) == sorted(ONLY)
    assert all(s.state in ("SUCCEEDED", "FAILED") and not s.error for s in result.specs), result.specs


def test_a_resumed_run_keeps_specs_that_ended_and_runs_the_rest(service: Service, tmp_path: Path) -> None:
    servicer, target = service
    run_bench(SUITE, "cuda", budget=3, out_dir=tmp_path, grpc_target=target, token="s3cret", only=ONLY[:2],
              parallel_jobs=1, copy_bw_gbs=3000.0, poll_s=0.01, stem="part")
    # A spec the runner could not follow (NOT_RUN) is run again; the two that ended are kept.
    saved = json.loads((tmp_path / "part.json").read_text())
    saved["specs"].append({"spec": ONLY[2], "state": "NOT_RUN", "error": "controller unreachable"})
    (tmp_path / "part.json").write_text(json.dumps(saved))
    submitted_before = len(servicer.submitted)
    result = run_bench(SUITE, "cuda", budget=3, out_dir=tmp_path, grpc_target=target, token="s3cret", only=ONLY,
                       parallel_jobs=1, copy_bw_gbs=3000.0, poll_s=0.01, stem="part", resume=True)
    assert [r.spec.name for r in servicer.submitted[submitted_before:]] == [ONLY[2]]
    assert sorted(s.spec for s in result.specs) == sorted(ONLY)
    assert all(s.state in ("SUCCEEDED", "FAILED") for s in result.specs)
    with pytest.raises(ValueError, match="same platform"):
        run_bench(SUITE, "cpu", budget=3, out_dir=tmp_path, grpc_target=target, token="s3cret", only=ONLY,
                  stem="part", resume=True)
    # A GPU run's speeds belong to its budget: going on at another is refused, naming it.
    with pytest.raises(ValueError, match="budget 3, this run with 2"):
        run_bench(SUITE, "cuda", budget=2, out_dir=tmp_path, grpc_target=target, token="s3cret", only=ONLY,
                  stem="part", resume=True)


def test_the_cli_writes_into_the_run_dir_unless_told(service: Service, tmp_path: Path) -> None:
    _, target = service
    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)  # a second command keeps typer's subcommand form
    run_dir = tmp_path / "run"
    out = CliRunner().invoke(app, ["bench", str(SUITE), "--platform", "cuda", "--budget", "2", "--only", ONLY[0],
                                   "--copy-bw-gbs", "3000", "--target", target, "--token", "s3cret",
                                   "--run-dir", str(run_dir)])
    assert out.exit_code == 0, out.output
    assert (run_dir / "bench" / "suite_cuda.json").is_file()
