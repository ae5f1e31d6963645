from kevolve.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SelectionPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SELECTION_POLICY_UNSPECIFIED: _ClassVar[SelectionPolicy]
    GREEDY: _ClassVar[SelectionPolicy]
    MCTS: _ClassVar[SelectionPolicy]
    EVOLUTIONARY: _ClassVar[SelectionPolicy]
    RANDOM: _ClassVar[SelectionPolicy]

class JobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATE_UNSPECIFIED: _ClassVar[JobState]
    QUEUED: _ClassVar[JobState]
    RUNNING: _ClassVar[JobState]
    SUCCEEDED: _ClassVar[JobState]
    FAILED: _ClassVar[JobState]
    CANCELLED: _ClassVar[JobState]

class NodeStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NODE_STATUS_UNSPECIFIED: _ClassVar[NodeStatus]
    GENERATED: _ClassVar[NodeStatus]
    SCREENING: _ClassVar[NodeStatus]
    EVALUATING: _ClassVar[NodeStatus]
    PROFILING: _ClassVar[NodeStatus]
    DONE: _ClassVar[NodeStatus]
SELECTION_POLICY_UNSPECIFIED: SelectionPolicy
GREEDY: SelectionPolicy
MCTS: SelectionPolicy
EVOLUTIONARY: SelectionPolicy
RANDOM: SelectionPolicy
JOB_STATE_UNSPECIFIED: JobState
QUEUED: JobState
RUNNING: JobState
SUCCEEDED: JobState
FAILED: JobState
CANCELLED: JobState
NODE_STATUS_UNSPECIFIED: NodeStatus
GENERATED: NodeStatus
SCREENING: NodeStatus
EVALUATING: NodeStatus
PROFILING: NodeStatus
DONE: NodeStatus

class KernelSpec(_message.Message):
    __slots__ = ("name", "source", "source_key", "test_cases", "cpu_sizes", "atol", "rtol")
    class CpuSizesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KEY_FIELD_NUMBER: _ClassVar[int]
    TEST_CASES_FIELD_NUMBER: _ClassVar[int]
    CPU_SIZES_FIELD_NUMBER: _ClassVar[int]
    ATOL_FIELD_NUMBER: _ClassVar[int]
    RTOL_FIELD_NUMBER: _ClassVar[int]
    name: str
    source: str
    source_key: str
    test_cases: _containers.RepeatedCompositeFieldContainer[_common_pb2.TestCase]
    cpu_sizes: _containers.ScalarMap[str, int]
    atol: float
    rtol: float
    def __init__(self, name: _Optional[str] = ..., source: _Optional[str] = ..., source_key: _Optional[str] = ..., test_cases: _Optional[_Iterable[_Union[_common_pb2.TestCase, _Mapping]]] = ..., cpu_sizes: _Optional[_Mapping[str, int]] = ..., atol: _Optional[float] = ..., rtol: _Optional[float] = ...) -> None: ...

class JobConfig(_message.Message):
    __slots__ = ("budget", "policy", "parallelism", "wall_clock_s", "max_cost_usd", "max_tokens", "patience", "target_speedup", "seed", "uct_c", "islands", "migration_interval", "no_reuse", "skip_screening", "models", "cuda_graphs", "allow_tf32")
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    PARALLELISM_FIELD_NUMBER: _ClassVar[int]
    WALL_CLOCK_S_FIELD_NUMBER: _ClassVar[int]
    MAX_COST_USD_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PATIENCE_FIELD_NUMBER: _ClassVar[int]
    TARGET_SPEEDUP_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    UCT_C_FIELD_NUMBER: _ClassVar[int]
    ISLANDS_FIELD_NUMBER: _ClassVar[int]
    MIGRATION_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    NO_REUSE_FIELD_NUMBER: _ClassVar[int]
    SKIP_SCREENING_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    CUDA_GRAPHS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_TF32_FIELD_NUMBER: _ClassVar[int]
    budget: int
    policy: SelectionPolicy
    parallelism: int
    wall_clock_s: float
    max_cost_usd: float
    max_tokens: int
    patience: int
    target_speedup: float
    seed: int
    uct_c: float
    islands: int
    migration_interval: int
    no_reuse: bool
    skip_screening: bool
    models: _containers.RepeatedScalarFieldContainer[str]
    cuda_graphs: bool
    allow_tf32: bool
    def __init__(self, budget: _Optional[int] = ..., policy: _Optional[_Union[SelectionPolicy, str]] = ..., parallelism: _Optional[int] = ..., wall_clock_s: _Optional[float] = ..., max_cost_usd: _Optional[float] = ..., max_tokens: _Optional[int] = ..., patience: _Optional[int] = ..., target_speedup: _Optional[float] = ..., seed: _Optional[int] = ..., uct_c: _Optional[float] = ..., islands: _Optional[int] = ..., migration_interval: _Optional[int] = ..., no_reuse: _Optional[bool] = ..., skip_screening: _Optional[bool] = ..., models: _Optional[_Iterable[str]] = ..., cuda_graphs: _Optional[bool] = ..., allow_tf32: _Optional[bool] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ("job_id", "tenant", "spec", "platform", "config", "state", "end_reason", "best_node_id", "best_fitness", "candidates", "evaluated", "passed", "created_at", "updated_at", "usage", "fitness_is_speed", "fitness_unit")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    END_REASON_FIELD_NUMBER: _ClassVar[int]
    BEST_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    BEST_FITNESS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    EVALUATED_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    FITNESS_IS_SPEED_FIELD_NUMBER: _ClassVar[int]
    FITNESS_UNIT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    tenant: str
    spec: KernelSpec
    platform: str
    config: JobConfig
    state: JobState
    end_reason: str
    best_node_id: str
    best_fitness: float
    candidates: int
    evaluated: int
    passed: int
    created_at: float
    updated_at: float
    usage: _common_pb2.Usage
    fitness_is_speed: bool
    fitness_unit: str
    def __init__(self, job_id: _Optional[str] = ..., tenant: _Optional[str] = ..., spec: _Optional[_Union[KernelSpec, _Mapping]] = ..., platform: _Optional[str] = ..., config: _Optional[_Union[JobConfig, _Mapping]] = ..., state: _Optional[_Union[JobState, str]] = ..., end_reason: _Optional[str] = ..., best_node_id: _Optional[str] = ..., best_fitness: _Optional[float] = ..., candidates: _Optional[int] = ..., evaluated: _Optional[int] = ..., passed: _Optional[int] = ..., created_at: _Optional[float] = ..., updated_at: _Optional[float] = ..., usage: _Optional[_Union[_common_pb2.Usage, _Mapping]] = ..., fitness_is_speed: _Optional[bool] = ..., fitness_unit: _Optional[str] = ...) -> None: ...

class Candidate(_message.Message):
    __slots__ = ("node_id", "job_id", "parent_id", "generation", "status", "verdict", "fitness", "is_buggy", "code_key", "eval_report_key", "screen_report_key", "profile_report_key", "prompt_key", "reason", "decided_by", "context_mode", "policy", "tunables", "usage", "retrieved_docs", "created_at", "backend", "suspicious", "approved", "candidate_ms", "baseline_ms", "profile_summary", "case_fitness", "diagnosis", "reply_key", "full_report_key")
    class TunablesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class CaseFitnessEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    FITNESS_FIELD_NUMBER: _ClassVar[int]
    IS_BUGGY_FIELD_NUMBER: _ClassVar[int]
    CODE_KEY_FIELD_NUMBER: _ClassVar[int]
    EVAL_REPORT_KEY_FIELD_NUMBER: _ClassVar[int]
    SCREEN_REPORT_KEY_FIELD_NUMBER: _ClassVar[int]
    PROFILE_REPORT_KEY_FIELD_NUMBER: _ClassVar[int]
    PROMPT_KEY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DECIDED_BY_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_MODE_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    TUNABLES_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    RETRIEVED_DOCS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    SUSPICIOUS_FIELD_NUMBER: _ClassVar[int]
    APPROVED_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_MS_FIELD_NUMBER: _ClassVar[int]
    BASELINE_MS_FIELD_NUMBER: _ClassVar[int]
    PROFILE_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    CASE_FITNESS_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSIS_FIELD_NUMBER: _ClassVar[int]
    REPLY_KEY_FIELD_NUMBER: _ClassVar[int]
    FULL_REPORT_KEY_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    job_id: str
    parent_id: str
    generation: int
    status: NodeStatus
    verdict: _common_pb2.Verdict
    fitness: float
    is_buggy: bool
    code_key: str
    eval_report_key: str
    screen_report_key: str
    profile_report_key: str
    prompt_key: str
    reason: str
    decided_by: str
    context_mode: _common_pb2.ContextMode
    policy: SelectionPolicy
    tunables: _containers.ScalarMap[str, str]
    usage: _common_pb2.Usage
    retrieved_docs: _containers.RepeatedScalarFieldContainer[str]
    created_at: float
    backend: str
    suspicious: bool
    approved: bool
    candidate_ms: float
    baseline_ms: float
    profile_summary: str
    case_fitness: _containers.ScalarMap[str, float]
    diagnosis: str
    reply_key: str
    full_report_key: str
    def __init__(self, node_id: _Optional[str] = ..., job_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., generation: _Optional[int] = ..., status: _Optional[_Union[NodeStatus, str]] = ..., verdict: _Optional[_Union[_common_pb2.Verdict, str]] = ..., fitness: _Optional[float] = ..., is_buggy: _Optional[bool] = ..., code_key: _Optional[str] = ..., eval_report_key: _Optional[str] = ..., screen_report_key: _Optional[str] = ..., profile_report_key: _Optional[str] = ..., prompt_key: _Optional[str] = ..., reason: _Optional[str] = ..., decided_by: _Optional[str] = ..., context_mode: _Optional[_Union[_common_pb2.ContextMode, str]] = ..., policy: _Optional[_Union[SelectionPolicy, str]] = ..., tunables: _Optional[_Mapping[str, str]] = ..., usage: _Optional[_Union[_common_pb2.Usage, _Mapping]] = ..., retrieved_docs: _Optional[_Iterable[str]] = ..., created_at: _Optional[float] = ..., backend: _Optional[str] = ..., suspicious: _Optional[bool] = ..., approved: _Optional[bool] = ..., candidate_ms: _Optional[float] = ..., baseline_ms: _Optional[float] = ..., profile_summary: _Optional[str] = ..., case_fitness: _Optional[_Mapping[str, float]] = ..., diagnosis: _Optional[str] = ..., reply_key: _Optional[str] = ..., full_report_key: _Optional[str] = ...) -> None: ...

class JobEvent(_message.Message):
    __slots__ = ("job_id", "at", "kind", "message", "job", "candidate")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    at: float
    kind: str
    message: str
    job: Job
    candidate: Candidate
    def __init__(self, job_id: _Optional[str] = ..., at: _Optional[float] = ..., kind: _Optional[str] = ..., message: _Optional[str] = ..., job: _Optional[_Union[Job, _Mapping]] = ..., candidate: _Optional[_Union[Candidate, _Mapping]] = ...) -> None: ...
