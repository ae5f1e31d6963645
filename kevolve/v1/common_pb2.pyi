from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Verdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VERDICT_UNSPECIFIED: _ClassVar[Verdict]
    PASSED: _ClassVar[Verdict]
    COMPILE_ERROR: _ClassVar[Verdict]
    RUNTIME_ERROR: _ClassVar[Verdict]
    INCORRECT: _ClassVar[Verdict]
    TIMEOUT: _ClassVar[Verdict]
    CRASHED: _ClassVar[Verdict]
    OUT_OF_MEMORY: _ClassVar[Verdict]
    REJECTED_STATIC: _ClassVar[Verdict]
    REJECTED_RUNTIME: _ClassVar[Verdict]
    SUSPICIOUS: _ClassVar[Verdict]
    NO_CODE: _ClassVar[Verdict]
    INFRA_ERROR: _ClassVar[Verdict]

class ContextMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTEXT_MODE_UNSPECIFIED: _ClassVar[ContextMode]
    PARENT_TRAJECTORY: _ClassVar[ContextMode]
    SIBLING_COMPARE: _ClassVar[ContextMode]
    TRAJECTORY_AND_SIBLINGS: _ClassVar[ContextMode]
    FRESH_START: _ClassVar[ContextMode]
VERDICT_UNSPECIFIED: Verdict
PASSED: Verdict
COMPILE_ERROR: Verdict
RUNTIME_ERROR: Verdict
INCORRECT: Verdict
TIMEOUT: Verdict
CRASHED: Verdict
OUT_OF_MEMORY: Verdict
REJECTED_STATIC: Verdict
REJECTED_RUNTIME: Verdict
SUSPICIOUS: Verdict
NO_CODE: Verdict
INFRA_ERROR: Verdict
CONTEXT_MODE_UNSPECIFIED: ContextMode
PARENT_TRAJECTORY: ContextMode
SIBLING_COMPARE: ContextMode
TRAJECTORY_AND_SIBLINGS: ContextMode
FRESH_START: ContextMode

class NodeSummary(_message.Message):
    __slots__ = ("node_id", "parent_id", "verdict", "fitness", "code_key", "eval_report_key", "profile_report_key", "tunables", "summary", "generation")
    class TunablesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    FITNESS_FIELD_NUMBER: _ClassVar[int]
    CODE_KEY_FIELD_NUMBER: _ClassVar[int]
    EVAL_REPORT_KEY_FIELD_NUMBER: _ClassVar[int]
    PROFILE_REPORT_KEY_FIELD_NUMBER: _ClassVar[int]
    TUNABLES_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    parent_id: str
    verdict: Verdict
    fitness: float
    code_key: str
    eval_report_key: str
    profile_report_key: str
    tunables: _containers.ScalarMap[str, str]
    summary: str
    generation: int
    def __init__(self, node_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., verdict: _Optional[_Union[Verdict, str]] = ..., fitness: _Optional[float] = ..., code_key: _Optional[str] = ..., eval_report_key: _Optional[str] = ..., profile_report_key: _Optional[str] = ..., tunables: _Optional[_Mapping[str, str]] = ..., summary: _Optional[str] = ..., generation: _Optional[int] = ...) -> None: ...

class TestCase(_message.Message):
    __slots__ = ("name", "sizes")
    class SizesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    SIZES_FIELD_NUMBER: _ClassVar[int]
    name: str
    sizes: _containers.ScalarMap[str, int]
    def __init__(self, name: _Optional[str] = ..., sizes: _Optional[_Mapping[str, int]] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("prompt_tokens", "completion_tokens", "cost_usd", "model")
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    model: str
    def __init__(self, prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ..., cost_usd: _Optional[float] = ..., model: _Optional[str] = ...) -> None: ...
