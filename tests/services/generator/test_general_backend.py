"""Specs no template serves get a kernel program from the general lowering, which passes the
evaluator (sandboxed, cpu pool): the whole path a user's unusual spec takes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from kevolve.config import REPO_ROOT
from kevolve.platforms import get_platform
from kevolve.v1 import common_pb2, work_pb2
from services.evaluator.config import EvaluatorSettings
from services.evaluator.harness import Harness
from services.evaluator.plan import EvalJob
from services.generator.backends.offline import OfflineBackend

SPECS = sorted((REPO_ROOT / "tests" / "fixtures" / "specs" / "general").glob("*.py"))
# A spec with products, rows and pointwise kernels, whose code most tunables change (an
# attention's kernel is untouched by the tile moves of products it does not have).
MANY_KNOBS = REPO_ROOT / "tests" / "fixtures" / "specs" / "general" / "lstm_gru_head.py"


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    h = Harness(EvaluatorSettings(platform="cpu", scratch_dir=tmp_path_factory.mktemp("ev"), timeout_s=300,
                                  memory_mb=4096), REPO_ROOT / "kb")
    yield h
    h.close()


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[OfflineBackend]:
    b = OfflineBackend(REPO_ROOT / "kb" / "templates", trace_timeout_s=120, scratch_dir=tmp_path / "gen")
    yield b
    await b.aclose()


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
async def test_general_program_passes_the_evaluator(spec: Path, backend: OfflineBackend, harness: Harness) -> None:
    request = work_pb2.GenerateRequest()
    request.expand.tenant = "t"
    request.expand.spec_name = spec.stem
    gen = await backend.generate(request, "", spec.read_text(), None)
    assert gen.code, gen.error
    assert gen.tunables["template"] == "general"
    outcome = harness.evaluate(EvalJob(spec_source=spec.read_text(), candidate_source=gen.code,
                                       platform=get_platform(REPO_ROOT / "kb", "cpu"), seed=11, tenant="t"))
    result = outcome.result
    assert result.verdict == common_pb2.PASSED, (result.decided_by, result.reason, outcome.report["traceback"][-2000:])


async def test_later_expansions_move_the_lowerings_tunables(backend: OfflineBackend) -> None:
    spec = MANY_KNOBS
    first_request = work_pb2.GenerateRequest()
    first_request.expand.tenant = "t"
    first = await backend.generate(first_request, "", spec.read_text(), None)
    assert first.code and first.tunables["template"] == "general"
    child_request = work_pb2.GenerateRequest(diagnosis=work_pb2.Diagnosis(category="slow", bottleneck="compute_bound"))
    child_request.expand.tenant = "t"
    child_request.expand.parent.node_id = "p"
    child_request.expand.parent.tunables.update(first.tunables)
    # The job's code, as the controller tells it: a knob that leaves this spec's code as it
    # was (ONLINE_MAX, for a spec with no online softmax) is passed over.
    from services.generator.backends.distinct import code_key
    child_request.expand.tried_code_keys.append(code_key(first.code))
    child = await backend.generate(child_request, "", spec.read_text(), None)
    assert child.code and child.tunables["template"] == "general"
    moved = {k for k in first.tunables if first.tunables[k] != child.tunables.get(k)}
    assert len(moved) == 1, moved  # one knob per expansion
    assert child.code != first.code


async def test_the_lowerings_search_writes_code_the_job_does_not_have(backend: OfflineBackend) -> None:
    """Each expansion of a search through the general lowering's tunables writes a kernel
    program the job has not seen (a knob that does not matter for this spec is passed over),
    one knob away from its parent."""
    from services.generator.backends.distinct import code_key

    spec = MANY_KNOBS.read_text()
    keys: list[str] = []
    parent: dict[str, str] = {}
    for i in range(6):
        request = work_pb2.GenerateRequest(diagnosis=work_pb2.Diagnosis(category="slow", bottleneck="memory_bound"))
        request.expand.tenant = "t"
        request.expand.seed = i
        request.expand.tried_code_keys.extend(reversed(keys))
        if parent:
            request.expand.parent.node_id = "p"
            request.expand.parent.tunables.update(parent)
        gen = await backend.generate(request, "", spec, None)
        assert gen.code and gen.tunables["template"] == "general", gen.error
        if parent:
            assert sum(parent[k] != gen.tunables[k] for k in parent) == 1
        keys.append(code_key(gen.code))
        parent = parent or gen.tunables
    assert len(set(keys)) == len(keys)


async def test_float32_products_use_tf32_only_where_the_job_allows_it(backend: OfflineBackend) -> None:
    # The precision policy: float32 operands are multiplied to float32 accuracy (three TF32
    # products) unless the job allows TF32; the permission reaches the lowering from the request.
    spec = (REPO_ROOT / "tests" / "fixtures" / "specs" / "matmul_small.py").read_text()
    exact, _, _ = await backend._general.generate(spec, "matmul_small", "t")
    fast, _, _ = await backend._general.generate(spec, "matmul_small", "t", allow_tf32=True)
    assert exact and 'input_precision="tf32x3"' in exact and 'input_precision="tf32"' not in exact
    assert fast and 'input_precision="tf32"' in fast and "tf32x3" not in fast
