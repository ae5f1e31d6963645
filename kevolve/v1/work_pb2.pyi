from kevolve.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ExpandRequest(_message.Message):
    __slots__ = ("job_id", "expansion_id", "platform", "spec_name", "spec_key", "parent", "ancestors", "siblings", "context_mode", "generation", "seed", "model", "elites", "pending_siblings", "tenant", "cpu_sizes", "allow_tf32", "tried_code_keys")
    class CpuSizesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    EXPANSION_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    SPEC_NAME_FIELD_NUMBER: _ClassVar[int]
    SPEC_KEY_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    ANCESTORS_FIELD_NUMBER: _ClassVar[int]
    SIBLINGS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_MODE_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ELITES_FIELD_NUMBER: _ClassVar[int]
    PENDING_SIBLINGS_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    CPU_SIZES_FIELD_NUMBER: _ClassVar[int]
    ALLOW_TF32_FIELD_NUMBER: _ClassVar[int]
    TRIED_CODE_KEYS_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    expansion_id: str
    platform: str
    spec_name: str
    spec_key: str
    parent: _common_pb2.NodeSummary
    ancestors: _containers.RepeatedCompositeFieldContainer[_common_pb2.NodeSummary]
    siblings: _containers.RepeatedCompositeFieldContainer[_common_pb2.NodeSummary]
    context_mode: _common_pb2.ContextMode
    generation: int
    seed: int
    model: str
    elites: _containers.RepeatedCompositeFieldContainer[_common_pb2.NodeSummary]
    pending_siblings: int
    tenant: str
    cpu_sizes: _containers.ScalarMap[str, int]
    allow_tf32: bool
    tried_code_keys: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, job_id: _Optional[str] = ..., expansion_id: _Optional[str] = ..., platform: _Optional[str] = ..., spec_name: _Optional[str] = ..., spec_key: _Optional[str] = ..., parent: _Optional[_Union[_common_pb2.NodeSummary, _Mapping]] = ..., ancestors: _Optional[_Iterable[_Union[_common_pb2.NodeSummary, _Mapping]]] = ..., siblings: _Optional[_Iterable[_Union[_common_pb2.NodeSummary, _Mapping]]] = ..., context_mode: _Optional[_Union[_common_pb2.ContextMode, str]] = ..., generation: _Optional[int] = ..., seed: _Optional[int] = ..., model: _Optional[str] = ..., elites: _Optional[_Iterable[_Union[_common_pb2.NodeSummary, _Mapping]]] = ..., pending_siblings: _Optional[int] = ..., tenant: _Optional[str] = ..., cpu_sizes: _Optional[_Mapping[str, int]] = ..., allow_tf32: _Optional[bool] = ..., tried_code_keys: _Optional[_Iterable[str]] = ...) -> None: ...

class Diagnosis(_message.Message):
    __slots__ = ("category", "compile_error_class", "correctness_pattern", "bottleneck", "evidence", "tried", "keywords", "facts")
    class FactsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    COMPILE_ERROR_CLASS_FIELD_NUMBER: _ClassVar[int]
    CORRECTNESS_PATTERN_FIELD_NUMBER: _ClassVar[int]
    BOTTLENECK_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    TRIED_FIELD_NUMBER: _ClassVar[int]
    KEYWORDS_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    category: str
    compile_error_class: str
    correctness_pattern: str
    bottleneck: str
    evidence: str
    tried: _containers.RepeatedScalarFieldContainer[str]
    keywords: _containers.RepeatedScalarFieldContainer[str]
    facts: _containers.ScalarMap[str, str]
    def __init__(self, category: _Optional[str] = ..., compile_error_class: _Optional[str] = ..., correctness_pattern: _Optional[str] = ..., bottleneck: _Optional[str] = ..., evidence: _Optional[str] = ..., tried: _Optional[_Iterable[str]] = ..., keywords: _Optional[_Iterable[str]] = ..., facts: _Optional[_Mapping[str, str]] = ...) -> None: ...

class GenerateRequest(_message.Message):
    __slots__ = ("expand", "prompt_key", "diagnosis", "retrieved_docs")
    EXPAND_FIELD_NUMBER: _ClassVar[int]
    PROMPT_KEY_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSIS_FIELD_NUMBER: _ClassVar[int]
    RETRIEVED_DOCS_FIELD_NUMBER: _ClassVar[int]
    expand: ExpandRequest
    prompt_key: str
    diagnosis: Diagnosis
    retrieved_docs: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, expand: _Optional[_Union[ExpandRequest, _Mapping]] = ..., prompt_key: _Optional[str] = ..., diagnosis: _Optional[_Union[Diagnosis, _Mapping]] = ..., retrieved_docs: _Optional[_Iterable[str]] = ...) -> None: ...

class CandidateGenerated(_message.Message):
    __slots__ = ("job_id", "expansion_id", "parent_id", "code_key", "backend", "usage", "prompt_key", "retrieved_docs", "tunables", "context_mode", "error", "generation", "diagnosis", "generation_s", "reply_key", "job_cannot_continue")
    class TunablesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    EXPANSION_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    CODE_KEY_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    PROMPT_KEY_FIELD_NUMBER: _ClassVar[int]
    RETRIEVED_DOCS_FIELD_NUMBER: _ClassVar[int]
    TUNABLES_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_MODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSIS_FIELD_NUMBER: _ClassVar[int]
    GENERATION_S_FIELD_NUMBER: _ClassVar[int]
    REPLY_KEY_FIELD_NUMBER: _ClassVar[int]
    JOB_CANNOT_CONTINUE_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    expansion_id: str
    parent_id: str
    code_key: str
    backend: str
    usage: _common_pb2.Usage
    prompt_key: str
    retrieved_docs: _containers.RepeatedScalarFieldContainer[str]
    tunables: _containers.ScalarMap[str, str]
    context_mode: _common_pb2.ContextMode
    error: str
    generation: int
    diagnosis: Diagnosis
    generation_s: float
    reply_key: str
    job_cannot_continue: bool
    def __init__(self, job_id: _Optional[str] = ..., expansion_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., code_key: _Optional[str] = ..., backend: _Optional[str] = ..., usage: _Optional[_Union[_common_pb2.Usage, _Mapping]] = ..., prompt_key: _Optional[str] = ..., retrieved_docs: _Optional[_Iterable[str]] = ..., tunables: _Optional[_Mapping[str, str]] = ..., context_mode: _Optional[_Union[_common_pb2.ContextMode, str]] = ..., error: _Optional[str] = ..., generation: _Optional[int] = ..., diagnosis: _Optional[_Union[Diagnosis, _Mapping]] = ..., generation_s: _Optional[float] = ..., reply_key: _Optional[str] = ..., job_cannot_continue: _Optional[bool] = ...) -> None: ...
