"""The whole path, as a user runs it: five services as separate processes on a real NATS."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kevolve.client.jobclient import TERMINAL, JobClient
from kevolve.client.launcher import LocalSystem, start_system
from kevolve.config import REPO_ROOT
from kevolve.v1 import common_pb2, job_pb2

pytestmark = pytest.mark.slow

SOFTMAX = REPO_ROOT / "examples" / "softmax.py"

# Independent of the evaluator: load spec and kernel ourselves and compare on fresh inputs.
CHECK = textwrap.dedent("""
    import sys, torch
    from kevolve.specfile import load_module, outline
    spec_src = open(sys.argv[1]).read(); cand_path = sys.argv[2]
    sizes = outline(spec_src).cpu_sizes
    spec = load_module(spec_src, "ind_spec", sizes, filename=sys.argv[1])
    cand = load_module(open(cand_path).read(), "ind_cand", None, filename=cand_path)
    torch.manual_seed(1234)
    ref = spec.Model(*spec.get_init_inputs())
    new = cand.ModelNew(*spec.get_init_inputs())
    new.load_state_dict(ref.state_dict())
    for seed in (11, 12, 13):
        torch.manual_seed(seed)
        inputs = spec.get_inputs()
        want = ref(*[t.clone() for t in inputs])
        got = new(*[t.clone() for t in inputs])
        assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
        assert torch.allclose(got, want, atol=1e-4, rtol=1e-4), (got - want).abs().max().item()
    print("INDEPENDENT-CHECK-OK")
""")


def wait_for_end(client: JobClient, job_id: str, timeout_s: float) -> job_pb2.Job:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = client.get(job_id)
        if job.state in TERMINAL:
            return job
        time.sleep(1)
    raise AssertionError(f"job {job_id} did not end within {timeout_s}s: {client.get(job_id)}")


def lineage(db_path: Path, node_id: str) -> list[str]:
    """Ancestors of a node, read straight from the controller's SQLite file."""
    import sqlalchemy as sa

    engine = sa.create_engine(f"sqlite:///{db_path}")
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            "WITH RECURSIVE chain(id, parent_id) AS ("
            " SELECT id, parent_id FROM nodes WHERE id = :id"
            " UNION ALL SELECT n.id, n.parent_id FROM nodes n JOIN chain c ON n.id = c.parent_id)"
            " SELECT id FROM chain"), {"id": node_id}).all()
    engine.dispose()
    return [r[0] for r in rows]


@pytest.fixture
def system(tmp_path: Path):  # type: ignore[no-untyped-def]
    system = start_system(tmp_path / "run", ("cpu",), extra_env={"KEVOLVE_ACK_WAIT_S": "6"})
    yield system
    system.stop()


def test_spec_over_grpc_comes_back_as_a_verified_kernel(system: LocalSystem, tmp_path: Path) -> None:
    client = JobClient(system.grpc_target)
    job = client.submit(SOFTMAX, "cpu", job_pb2.JobConfig(budget=3, seed=5, parallelism=2, no_reuse=True))
    job = wait_for_end(client, job.job_id, timeout_s=240)
    assert job.state == job_pb2.SUCCEEDED, job
    assert job.evaluated == job.candidates <= 3

    best = client.best(job.job_id)
    assert best.candidate.verdict == common_pb2.PASSED and best.platform == "cpu"
    assert "ModelNew" in best.code and "triton.jit" in best.code

    # Its code is in the object store under its content key, byte for byte.
    stored = (system.run_dir / "objects" / best.candidate.code_key).read_text()
    assert stored == best.code

    # The node and its ancestors are in the database.
    chain = lineage(system.run_dir / "kevolve.db", best.candidate.node_id)
    assert chain[0] == best.candidate.node_id
    assert len(chain) == best.candidate.generation + 1  # roots are generation 0

    # And it passes a correctness check that owes nothing to the evaluator.
    kernel = tmp_path / "best.py"
    kernel.write_text(best.code)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO_ROOT)}
    out = subprocess.run([sys.executable, "-c", CHECK, str(SOFTMAX), str(kernel)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert "INDEPENDENT-CHECK-OK" in out.stdout, out.stderr[-3000:]

    # The export never claims speed the platform cannot measure: on cpu every shape falls
    # back to the reference, and the module still computes the spec's function.
    from kevolve.v1 import service_pb2

    exported = client.stub.ExportJob(service_pb2.ExportJobRequest(job_id=job.job_id))
    assert exported.kernels == 0 and exported.fallbacks >= 1
    module = tmp_path / "exported.py"
    module.write_text(exported.module_source)
    compile(exported.module_source, str(module), "exec")
    html = client.stub.GetReport(service_pb2.GetReportRequest(job_id=job.job_id)).html
    assert job.job_id in html and "<svg" in html and "ModelNew" in html

    # The CLI a user runs: status, best -o, and why the kernel was written (prompt, KB docs).
    def cli(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "kevolve.client.main", *args, "--target", system.grpc_target],
                              env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200"},
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    assert "SUCCEEDED" in cli("status", job.job_id)
    cli("best", job.job_id, "-o", str(tmp_path / "cli_best.py"))
    assert (tmp_path / "cli_best.py").read_text() == best.code
    shown = cli("node", job.job_id, best.candidate.node_id, "--prompt")
    assert "retrieved docs" in shown and "PASSED" in shown
    assert any(doc in shown for doc in best.candidate.retrieved_docs)  # the KB sections it was prompted with
    assert "ModelNew" in shown                                         # the prompt asks for a ModelNew
    # Piped at 80 columns, the source comes out as stored: a saved kernel parses.
    piped = subprocess.run([sys.executable, "-m", "kevolve.client.main", "node", job.job_id,
                            best.candidate.node_id, "--code", "--target", system.grpc_target],
                           env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "80"},
                           capture_output=True, text=True, timeout=60).stdout
    assert piped == best.code
    compile(piped, "kernel.py", "exec")
    # At 80 columns every node still reads whole and apart from the others.
    listed = subprocess.run([sys.executable, "-m", "kevolve.client.main", "candidates", job.job_id,
                             "--target", system.grpc_target],
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "80"},
                            capture_output=True, text=True, timeout=60).stdout
    suffixes = [n.node_id[len(job.job_id) + 1:] for n in client.candidates(job.job_id)]
    rows = [line.split("│")[1].strip() for line in listed.splitlines() if line.count("│") > 2]
    assert sorted(r for r in rows if r and r != "node") == sorted(suffixes), listed


def test_a_spec_at_gpu_sizes_without_screening_sizes_is_screened_at_derived_ones(system: LocalSystem) -> None:
    """A spec written for a GPU (a 4096 x 2048 batch through a 2048 x 8192 MLP) that names no
    cpu_shapes: the probe derives screening sizes, the generator writes kernels for them and
    the interpreter pool verifies one within the budget."""
    spec = REPO_ROOT / "tests" / "fixtures" / "specs" / "gpu_sized" / "mlp_block.py"
    client = JobClient(system.grpc_target)
    job = client.submit(spec, "cpu", job_pb2.JobConfig(budget=2, seed=3, parallelism=1, no_reuse=True))
    job = wait_for_end(client, job.job_id, timeout_s=240)
    assert job.state == job_pb2.SUCCEEDED, job
    best = client.best(job.job_id)
    assert best.candidate.verdict == common_pb2.PASSED, best.candidate.reason
    derived = dict(job.spec.cpu_sizes)
    assert set(derived) == {"batch_size", "hidden"} and derived["hidden"] < 2048, derived

    # The CLI shows them, and --cpu-size chooses others.
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kevolve.client.main", *args, "--target", system.grpc_target],
                              env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200"},
                              capture_output=True, text=True, timeout=120)

    assert f"hidden={derived['hidden']}" in cli("status", job.job_id).stdout
    chosen = cli("submit", str(spec), "--cpu-size", "batch_size=16", "--cpu-size", "hidden=32", "--no-follow")
    assert chosen.returncode == 0, chosen.stderr
    job_id = chosen.stdout.split("submitted job", 1)[1].split()[0]
    assert dict(client.get(job_id).spec.cpu_sizes) == {"batch_size": 16, "hidden": 32}
    client.cancel(job_id)
    refused = cli("submit", str(spec), "--cpu-size", "hidden", "--no-follow")
    assert refused.returncode == 1 and "expected NAME=INTEGER" in refused.stderr


def test_killed_evaluator_loses_no_work(system: LocalSystem) -> None:
    """SIGKILL the evaluator while it holds a candidate: JetStream redelivers it to the new one."""
    import nats

    client = JobClient(system.grpc_target)
    job = client.submit(SOFTMAX, "cpu", job_pb2.JobConfig(budget=3, seed=9, parallelism=1, no_reuse=True))
    evaluator = next(s for s in system.services if s.name == "evaluator-cpu")

    async def wait_until_evaluating() -> None:
        nc = await nats.connect(system.nats.url)
        js = nc.jetstream()
        deadline = time.monotonic() + 180
        try:
            while time.monotonic() < deadline:
                try:
                    info = await js.consumer_info("KEVOLVE_WORK", "eval-cpu")
                    if info.num_ack_pending:
                        return
                except Exception:
                    pass
                await asyncio.sleep(0.05)
            raise AssertionError("no evaluation was ever in flight")
        finally:
            await nc.close()

    asyncio.run(wait_until_evaluating())
    assert evaluator.process is not None
    os.killpg(evaluator.process.pid, signal.SIGKILL)
    evaluator.process.wait()
    assert [e.name for e in system.supervise_once()] == ["evaluator-cpu"]  # a fresh one, as Kubernetes would start

    job = wait_for_end(client, job.job_id, timeout_s=300)
    assert job.state == job_pb2.SUCCEEDED, job
    nodes = client.candidates(job.job_id)
    assert len(nodes) == job.candidates and all(n.verdict != common_pb2.VERDICT_UNSPECIFIED for n in nodes)
    assert not any(n.verdict == common_pb2.INFRA_ERROR for n in nodes), [n.reason for n in nodes]


def test_bad_spec_is_rejected_with_the_python_error(system: LocalSystem, tmp_path: Path) -> None:
    from kevolve.client.jobclient import ClientError

    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nimport no_such_module_xyz\nclass Model: pass\n"
                      "def get_inputs(): return []\ndef get_init_inputs(): return []\n")
    client = JobClient(system.grpc_target)
    with pytest.raises(ClientError) as info:
        client.submit(broken, "cpu", job_pb2.JobConfig(budget=2))
    assert "INVALID_ARGUMENT" in str(info.value) and "no_such_module_xyz" in str(info.value)
    # Nothing else disturbed: the system still accepts a good spec.
    job = client.submit(SOFTMAX, "cpu", job_pb2.JobConfig(budget=1, no_reuse=True))
    assert job.job_id
