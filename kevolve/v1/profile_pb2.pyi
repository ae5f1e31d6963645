from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class ProfileRequest(_message.Message):
    __slots__ = ("job_id", "node_id", "platform", "spec_key", "candidate_key", "eval_report_key", "sizes", "tenant")
    class SizesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    SPEC_KEY_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_KEY_FIELD_NUMBER: _ClassVar[int]
    EVAL_REPORT_KEY_FIELD_NUMBER: _ClassVar[int]
    SIZES_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    node_id: str
    platform: str
    spec_key: str
    candidate_key: str
    eval_report_key: str
    sizes: _containers.ScalarMap[str, int]
    tenant: str
    def __init__(self, job_id: _Optional[str] = ..., node_id: _Optional[str] = ..., platform: _Optional[str] = ..., spec_key: _Optional[str] = ..., candidate_key: _Optional[str] = ..., eval_report_key: _Optional[str] = ..., sizes: _Optional[_Mapping[str, int]] = ..., tenant: _Optional[str] = ...) -> None: ...

class ProfileResult(_message.Message):
    __slots__ = ("job_id", "node_id", "platform", "report_key", "summary", "bottleneck", "metrics", "tools", "unavailable", "error")
    class MetricsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    REPORT_KEY_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    BOTTLENECK_FIELD_NUMBER: _ClassVar[int]
    METRICS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    node_id: str
    platform: str
    report_key: str
    summary: str
    bottleneck: str
    metrics: _containers.ScalarMap[str, float]
    tools: _containers.RepeatedScalarFieldContainer[str]
    unavailable: _containers.RepeatedScalarFieldContainer[str]
    error: str
    def __init__(self, job_id: _Optional[str] = ..., node_id: _Optional[str] = ..., platform: _Optional[str] = ..., report_key: _Optional[str] = ..., summary: _Optional[str] = ..., bottleneck: _Optional[str] = ..., metrics: _Optional[_Mapping[str, float]] = ..., tools: _Optional[_Iterable[str]] = ..., unavailable: _Optional[_Iterable[str]] = ..., error: _Optional[str] = ...) -> None: ...
