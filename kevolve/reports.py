"""The reports services leave in the object store, as typed schemas: written once by the
service that measures, read the same way by every service and tool that uses them.

* :class:`EvaluationReport` at ``EvaluationResult.report_key`` (``reports/eval/<sha>.json``),
  written by the evaluator; read by the retriever (diagnosis), the controller (export) and the
  client (bench report, ``kevolve eval``).
* :class:`ProfileReport` at ``ProfileResult.report_key`` (``reports/profile/<sha>.json``),
  written by the profiler; read by the retriever.

The ``result`` of each is the protobuf message the service published, in its JSON mapping
(the evaluator's with proto field names, the profiler's in camelCase, as they always were);
reading accepts either spelling, so no reader needs fallbacks of its own.

Reading is lenient on purpose: a report may come from an older service or be cut short,
and a reader must learn what is there rather than fail on what is not. A field that is
missing or of the wrong type reads as its default (a proto field the same way, one by one).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Self, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message
from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, ValidationError

from kevolve.v1 import evaluation_pb2, profile_pb2

LOG_CHARS = 20_000  # the tail of a candidate's output a report keeps
M = TypeVar("M", bound=Message)


def parse_message(raw: object, message: M) -> M:
    """``raw`` (a JSON object, either field spelling) merged into ``message`` field by field:
    an entry that does not parse is left out instead of failing the rest."""
    if not isinstance(raw, Mapping):
        return message
    for key, value in raw.items():
        if isinstance(value, Mapping) and _is_scalar_map(message, key):
            for k, v in value.items():  # a map: one bad entry costs that entry only
                _merge(message, {key: {k: v}})
        else:
            _merge(message, {key: value})
    return message


def _is_scalar_map(message: Message, key: str) -> bool:
    fields = message.DESCRIPTOR.fields_by_name
    field = fields.get(key) or next((f for f in fields.values() if f.json_name == key), None)
    if field is None or field.message_type is None or not field.message_type.GetOptions().map_entry:
        return False
    return field.message_type.fields_by_name["value"].message_type is None


def _merge(message: Message, raw: dict[str, Any]) -> None:
    part = type(message)()
    try:
        json_format.ParseDict(raw, part, ignore_unknown_fields=True)
    except (json_format.ParseError, TypeError, ValueError, AttributeError):
        return
    message.MergeFrom(part)


def _message_field(cls: type[Message], *, proto_names: bool) -> Any:
    """A pydantic field holding a protobuf message, kept in its JSON mapping on disk."""
    return Annotated[
        cls,
        PlainValidator(lambda raw: raw if isinstance(raw, cls) else parse_message(raw, cls())),
        PlainSerializer(lambda m: json_format.MessageToDict(m, preserving_proto_field_name=proto_names),
                        return_type=dict),
    ]


class _Report(BaseModel):
    """Lenient reading shared by the report schemas (see the module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="ignore")

    @classmethod
    def read(cls, data: bytes | str | Mapping[str, Any] | Self | None) -> Self:
        """A report from its stored bytes or its parsed JSON; fields that do not parse read as defaults."""
        if isinstance(data, cls):
            return data
        raw: object = data
        if isinstance(data, (bytes, str)):
            try:
                raw = json.loads(data)
            except ValueError:
                raw = {}
        if not isinstance(raw, Mapping):
            raw = {}
        try:
            return cls.model_validate(raw)
        except ValidationError:
            pass
        kept: dict[str, Any] = {}
        for name in cls.model_fields:
            if name in raw:
                try:
                    kept[name] = getattr(cls.model_validate({name: raw[name]}), name)
                except ValidationError:
                    continue  # this field reads as its default
        return cls.model_validate(kept)

    def to_json(self) -> bytes:
        return json.dumps(self.model_dump(mode="json"), indent=1, default=str).encode()


class Check(BaseModel):
    """One check of an evaluation, in the order run (``static``, ``reference``, ``trials``...)."""

    name: str
    passed: bool
    detail: str = ""


class Mismatch(BaseModel):
    """Where an incorrect candidate's outputs first differed from the reference."""

    model_config = ConfigDict(extra="allow")

    case: str | None = None
    trial: int | None = None
    kind: str | None = None             # "trials" or "recheck"
    frac_wrong: float | None = None
    boundary_only: bool | None = None
    nan_in_output: bool | None = None
    inf_in_output: bool | None = None
    max_abs_error: float | None = None
    expected_shape: list[int] | None = None
    got_shape: list[int] | None = None

    def facts(self) -> dict[str, object]:
        """The fields that were recorded (unset ones are not facts)."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class KernelLaunches(BaseModel):
    """A Triton kernel the candidate launched during its correctness trials."""

    name: str
    launches: int = 0
    grid: list[int] = Field(default_factory=list)


class CaseTiming(BaseModel):
    """A timing platform's measurement of one case (milliseconds, medians; 0 = not measured).

    ``extra`` holds the platform's counters, e.g. on cuda ``floor_ms`` (bytes moved at the
    measured copy bandwidth), ``async_gap_ms``, ``lead_us``, ``<contender>_host_ms`` and
    ``<contender>_retake_rate``."""

    candidate_ms: float = 0.0
    eager_ms: float = 0.0
    compile_ms: float = 0.0
    cv: float = 0.0
    simulated: bool = False
    extra: dict[str, float] = Field(default_factory=dict)
    calls: int = 0
    # Milliseconds per call when called back to back, host included (the call-loop view; 0
    # where the platform does not measure it).
    candidate_loop_ms: float = 0.0
    eager_loop_ms: float = 0.0
    compile_loop_ms: float = 0.0


class PlannedCase(BaseModel):
    name: str
    sizes: dict[str, int] = Field(default_factory=dict)
    trials: int = 0
    variants: list[str] = Field(default_factory=list)


class EvaluationPlanSummary(BaseModel):
    cases: list[PlannedCase] = Field(default_factory=list)


class EvaluationReport(_Report):
    """The JSON document at ``EvaluationResult.report_key`` (docs/architecture.md lists the fields)."""

    result: _message_field(evaluation_pb2.EvaluationResult, proto_names=True) = Field(  # type: ignore[valid-type]
        default_factory=evaluation_pb2.EvaluationResult)
    checks: list[Check] = Field(default_factory=list)
    log: str = ""
    traceback: str = ""
    mismatch: Mismatch | None = None
    kernels: list[KernelLaunches] = Field(default_factory=list)
    timing: dict[str, CaseTiming] = Field(default_factory=dict)   # by case index, as a string
    gpu_wait_s: float = 0.0             # queued for the GPU lock behind other candidates' timing
    gpu_lock_window: list[float] = Field(default_factory=list)    # [taken, given back], epoch seconds
    # When its job's baselines run held the GPU lock (in the first report to use those baselines).
    baseline_lock_window: list[float] = Field(default_factory=list)
    finished_at: float = 0.0            # epoch seconds the verdict was reached (0: not recorded)
    phases_s: dict[str, float] = Field(default_factory=dict)      # the worker's phases, in order
    candidate_phases_s: dict[str, float] = Field(default_factory=dict)  # as the candidate process saw them
    plan: EvaluationPlanSummary | None = None

    def case_timing(self, index: int) -> CaseTiming:
        """The platform's timing of the ``index``-th case of ``result.cases`` (zeros if none)."""
        return self.timing.get(str(index)) or CaseTiming()

    def device_seconds(self) -> float:
        """What this evaluation cost its pool, less the time it queued for the GPU lock (that
        time was another candidate's, and is counted as theirs)."""
        return self.result.duration_s - self.gpu_wait_s


class ProfileReport(_Report):
    """The JSON document at ``ProfileResult.report_key``: the result, the tool's own details and
    the request it answered."""

    result: _message_field(profile_pb2.ProfileResult, proto_names=False) = Field(  # type: ignore[valid-type]
        default_factory=profile_pb2.ProfileResult)
    details: dict[str, Any] = Field(default_factory=dict)
    request: _message_field(profile_pb2.ProfileRequest, proto_names=False) | None = None  # type: ignore[valid-type]

    def to_json(self) -> bytes:
        return json.dumps(self.model_dump(mode="json"), default=str, sort_keys=True).encode()
