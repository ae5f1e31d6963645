"""Which time decides a passing candidate's fitness: the call loop, host included, unless the
job's model runs under CUDA graphs (then GPU time). Built from a timing as a GPU child reports
it; the GPU itself is exercised in test_gpu.py."""

from __future__ import annotations

import pytest
from evaluator_helpers import FIXTURES

from kevolve.config import REPO_ROOT
from kevolve.platforms import get_platform
from kevolve.reports import CaseTiming
from kevolve.specfile import check_outline
from kevolve.v1 import common_pb2
from services.evaluator.plan import EvalJob, build_plan
from services.evaluator.verdict import RunState, build_outcome

SPEC = FIXTURES / "specs" / "softmax_small.py"
# A kernel twice as fast as torch.compile on the GPU whose wrapper spends so long on the host
# per call that, called back to back, it is slower: the case a GPU-time ranking gets wrong.
HOST_BOUND = CaseTiming(candidate_ms=0.010, eager_ms=0.030, compile_ms=0.020,
                        candidate_loop_ms=0.080, eager_loop_ms=0.060, compile_loop_ms=0.040,
                        extra={"floor_ms": 0.001})


def _outcome(timing: CaseTiming, **job: object):  # type: ignore[no-untyped-def]
    ejob = EvalJob(spec_source=SPEC.read_text(), candidate_source="", platform=get_platform(REPO_ROOT / "kb", "cuda"),
                   seed=7, **job)  # type: ignore[arg-type]
    plan = build_plan(ejob, check_outline(ejob.spec_source))
    state = RunState(timings={str(c.index): timing for c in plan.cases})
    return build_outcome(ejob, plan, state, 1.0).result


def test_fitness_is_the_call_loop_view_by_default() -> None:
    r = _outcome(HOST_BOUND)
    assert r.verdict == common_pb2.PASSED and r.fitness_view == "call_loop"
    assert r.fitness == pytest.approx(0.5)                     # 0.040 / 0.080
    case = r.cases[0]
    assert case.gpu_fitness == pytest.approx(2.0) and case.loop_fitness == pytest.approx(0.5)
    assert "per call in a loop" in case.reason and "per call in a loop" in r.reason


def test_a_job_under_cuda_graphs_is_ranked_by_gpu_time() -> None:
    r = _outcome(HOST_BOUND, cuda_graphs=True)
    assert r.fitness_view == "gpu_time" and r.fitness == pytest.approx(2.0)
    assert r.cases[0].loop_fitness == pytest.approx(0.5)      # still reported


def test_a_timer_without_a_call_loop_falls_back_to_gpu_time_and_says_so() -> None:
    r = _outcome(CaseTiming(candidate_ms=0.01, eager_ms=0.03, compile_ms=0.02))
    assert r.fitness_view == "gpu_time" and r.fitness == pytest.approx(2.0)
    assert "no call loop" in r.cases[0].reason


def test_a_call_loop_below_the_physical_floor_is_suspicious() -> None:
    # A result cache that hits in the loop (but not in the cold samples) shows up as calls
    # faster than the bytes they must move allow.
    timing = HOST_BOUND.model_copy(update={"candidate_loop_ms": 0.0008, "compile_loop_ms": 0.005})
    r = _outcome(timing)
    assert r.verdict == common_pb2.SUSPICIOUS and r.decided_by == "timing:below_physical_floor"
    assert "call loop" in r.reason


def test_the_result_states_the_precision_of_the_kernels_products_and_the_jobs_policy() -> None:
    from services.evaluator.precision import dot_precisions

    src = '''
import triton.language as tl
PREC: tl.constexpr = "ieee"
def k(a, b, c, d):
    tl.dot(a, b, input_precision="tf32x3")
    tl.dot(a, b, input_precision=PREC)
    tl.dot(c, d)
def launch():
    kern[(1,)](x, PRECISION="tf32")
def kk(a, b, PRECISION: tl.constexpr):
    tl.dot(a, b, input_precision=PRECISION)
'''
    assert dot_precisions(src) == ["ieee", "tf32", "tf32 (default)", "tf32x3"]
    assert dot_precisions("x = 1") == [] and dot_precisions("def (") == []
    r = _outcome(HOST_BOUND, allow_tf32=True)
    assert r.tf32_allowed and r.dot_precision == ""   # the candidate source here has no tl.dot


def _sliced(candidate_ms: float, compile_ms: float):  # type: ignore[no-untyped-def]
    """A case whose inputs and outputs take 0.1 ms at peak bandwidth, a quarter of the bytes
    being its outputs (a slice made contiguous reads only the part it keeps)."""
    from services.evaluator.protocol import OutputShape, ReferenceCase

    timing = CaseTiming(candidate_ms=candidate_ms, eager_ms=compile_ms * 1.2, compile_ms=compile_ms,
                        candidate_loop_ms=candidate_ms * 1.1, eager_loop_ms=compile_ms * 1.3,
                        compile_loop_ms=compile_ms * 1.2, extra={"floor_ms": 0.1})
    meta = ReferenceCase(bytes_moved=400 * 2**20, outputs=[OutputShape(shape=[25 * 2**20], dtype="torch.float32")])
    ejob = EvalJob(spec_source=SPEC.read_text(), candidate_source="", platform=get_platform(REPO_ROOT / "kb", "cuda"),
                   seed=7)
    plan = build_plan(ejob, check_outline(ejob.spec_source))
    state = RunState(timings={str(c.index): timing for c in plan.cases},
                     ref_meta={str(c.index): meta for c in plan.cases})
    return build_outcome(ejob, plan, state, 1.0).result


def test_a_floor_pytorch_itself_beats_falls_back_to_the_outputs_bytes() -> None:
    # torch.compile at 0.05 ms runs below the 0.1 ms its inputs and outputs would take: the
    # spec reads only part of its inputs, so a kernel as fast is no cheat. The outputs'
    # 0.025 ms still bounds it.
    assert _sliced(candidate_ms=0.045, compile_ms=0.05).verdict == common_pb2.PASSED
    r = _sliced(candidate_ms=0.01, compile_ms=0.05)
    assert r.verdict == common_pb2.SUSPICIOUS and r.decided_by == "timing:below_physical_floor"
    # Where PyTorch needs the whole floor, a kernel below it is suspicious as before.
    r = _sliced(candidate_ms=0.08, compile_ms=0.12)
    assert r.verdict == common_pb2.SUSPICIOUS and r.decided_by == "timing:below_physical_floor"
