from kevolve.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EvaluationRequest(_message.Message):
    __slots__ = ("job_id", "node_id", "platform", "stage", "spec_key", "candidate_key", "test_cases", "cpu_sizes", "atol", "rtol", "trials", "timeout_s", "seed", "attempt", "tenant", "cuda_graphs", "allow_tf32")
    class CpuSizesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    STAGE_FIELD_NUMBER: _ClassVar[int]
    SPEC_KEY_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_KEY_FIELD_NUMBER: _ClassVar[int]
    TEST_CASES_FIELD_NUMBER: _ClassVar[int]
    CPU_SIZES_FIELD_NUMBER: _ClassVar[int]
    ATOL_FIELD_NUMBER: _ClassVar[int]
    RTOL_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    CUDA_GRAPHS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_TF32_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    node_id: str
    platform: str
    stage: str
    spec_key: str
    candidate_key: str
    test_cases: _containers.RepeatedCompositeFieldContainer[_common_pb2.TestCase]
    cpu_sizes: _containers.ScalarMap[str, int]
    atol: float
    rtol: float
    trials: int
    timeout_s: float
    seed: int
    attempt: str
    tenant: str
    cuda_graphs: bool
    allow_tf32: bool
    def __init__(self, job_id: _Optional[str] = ..., node_id: _Optional[str] = ..., platform: _Optional[str] = ..., stage: _Optional[str] = ..., spec_key: _Optional[str] = ..., candidate_key: _Optional[str] = ..., test_cases: _Optional[_Iterable[_Union[_common_pb2.TestCase, _Mapping]]] = ..., cpu_sizes: _Optional[_Mapping[str, int]] = ..., atol: _Optional[float] = ..., rtol: _Optional[float] = ..., trials: _Optional[int] = ..., timeout_s: _Optional[float] = ..., seed: _Optional[int] = ..., attempt: _Optional[str] = ..., tenant: _Optional[str] = ..., cuda_graphs: _Optional[bool] = ..., allow_tf32: _Optional[bool] = ...) -> None: ...

class CaseResult(_message.Message):
    __slots__ = ("name", "sizes", "passed", "max_abs_error", "max_rel_error", "candidate_ms", "eager_ms", "compile_ms", "candidate_cv", "fitness", "reason", "bytes_moved", "flops", "simulated", "declared_bytes", "candidate_loop_ms", "eager_loop_ms", "compile_loop_ms", "gpu_fitness", "loop_fitness")
    class SizesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    SIZES_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    MAX_ABS_ERROR_FIELD_NUMBER: _ClassVar[int]
    MAX_REL_ERROR_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_MS_FIELD_NUMBER: _ClassVar[int]
    EAGER_MS_FIELD_NUMBER: _ClassVar[int]
    COMPILE_MS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_CV_FIELD_NUMBER: _ClassVar[int]
    FITNESS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    BYTES_MOVED_FIELD_NUMBER: _ClassVar[int]
    FLOPS_FIELD_NUMBER: _ClassVar[int]
    SIMULATED_FIELD_NUMBER: _ClassVar[int]
    DECLARED_BYTES_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_LOOP_MS_FIELD_NUMBER: _ClassVar[int]
    EAGER_LOOP_MS_FIELD_NUMBER: _ClassVar[int]
    COMPILE_LOOP_MS_FIELD_NUMBER: _ClassVar[int]
    GPU_FITNESS_FIELD_NUMBER: _ClassVar[int]
    LOOP_FITNESS_FIELD_NUMBER: _ClassVar[int]
    name: str
    sizes: _containers.ScalarMap[str, int]
    passed: bool
    max_abs_error: float
    max_rel_error: float
    candidate_ms: float
    eager_ms: float
    compile_ms: float
    candidate_cv: float
    fitness: float
    reason: str
    bytes_moved: float
    flops: float
    simulated: bool
    declared_bytes: float
    candidate_loop_ms: float
    eager_loop_ms: float
    compile_loop_ms: float
    gpu_fitness: float
    loop_fitness: float
    def __init__(self, name: _Optional[str] = ..., sizes: _Optional[_Mapping[str, int]] = ..., passed: _Optional[bool] = ..., max_abs_error: _Optional[float] = ..., max_rel_error: _Optional[float] = ..., candidate_ms: _Optional[float] = ..., eager_ms: _Optional[float] = ..., compile_ms: _Optional[float] = ..., candidate_cv: _Optional[float] = ..., fitness: _Optional[float] = ..., reason: _Optional[str] = ..., bytes_moved: _Optional[float] = ..., flops: _Optional[float] = ..., simulated: _Optional[bool] = ..., declared_bytes: _Optional[float] = ..., candidate_loop_ms: _Optional[float] = ..., eager_loop_ms: _Optional[float] = ..., compile_loop_ms: _Optional[float] = ..., gpu_fitness: _Optional[float] = ..., loop_fitness: _Optional[float] = ...) -> None: ...

class EvaluationResult(_message.Message):
    __slots__ = ("job_id", "node_id", "platform", "stage", "verdict", "decided_by", "reason", "max_abs_error", "fitness", "cases", "report_key", "sandbox", "environment", "speed_measured", "duration_s", "attempt", "worker", "fitness_view", "dot_precision", "tf32_allowed")
    class EnvironmentEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    STAGE_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    DECIDED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MAX_ABS_ERROR_FIELD_NUMBER: _ClassVar[int]
    FITNESS_FIELD_NUMBER: _ClassVar[int]
    CASES_FIELD_NUMBER: _ClassVar[int]
    REPORT_KEY_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_FIELD_NUMBER: _ClassVar[int]
    SPEED_MEASURED_FIELD_NUMBER: _ClassVar[int]
    DURATION_S_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    WORKER_FIELD_NUMBER: _ClassVar[int]
    FITNESS_VIEW_FIELD_NUMBER: _ClassVar[int]
    DOT_PRECISION_FIELD_NUMBER: _ClassVar[int]
    TF32_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    node_id: str
    platform: str
    stage: str
    verdict: _common_pb2.Verdict
    decided_by: str
    reason: str
    max_abs_error: float
    fitness: float
    cases: _containers.RepeatedCompositeFieldContainer[CaseResult]
    report_key: str
    sandbox: str
    environment: _containers.ScalarMap[str, str]
    speed_measured: bool
    duration_s: float
    attempt: str
    worker: str
    fitness_view: str
    dot_precision: str
    tf32_allowed: bool
    def __init__(self, job_id: _Optional[str] = ..., node_id: _Optional[str] = ..., platform: _Optional[str] = ..., stage: _Optional[str] = ..., verdict: _Optional[_Union[_common_pb2.Verdict, str]] = ..., decided_by: _Optional[str] = ..., reason: _Optional[str] = ..., max_abs_error: _Optional[float] = ..., fitness: _Optional[float] = ..., cases: _Optional[_Iterable[_Union[CaseResult, _Mapping]]] = ..., report_key: _Optional[str] = ..., sandbox: _Optional[str] = ..., environment: _Optional[_Mapping[str, str]] = ..., speed_measured: _Optional[bool] = ..., duration_s: _Optional[float] = ..., attempt: _Optional[str] = ..., worker: _Optional[str] = ..., fitness_view: _Optional[str] = ..., dot_precision: _Optional[str] = ..., tf32_allowed: _Optional[bool] = ...) -> None: ...
