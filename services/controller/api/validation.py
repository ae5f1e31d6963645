"""Checking a SubmitJobRequest field by field; every error names the field that is wrong."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from kevolve.platforms import UnknownPlatform, get_platform, load_platforms
from kevolve.v1 import job_pb2, service_pb2
from services.controller.config import ControllerSettings

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_MAX_SIZE = 2**31 - 1


class InvalidField(ValueError):
    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field


@dataclass(frozen=True)
class Checked:
    name: str
    platform: str
    config: job_pb2.JobConfig


def _finite_non_negative(field: str, value: float, upper: float | None = None) -> None:
    if not math.isfinite(value) or value < 0:
        raise InvalidField(field, f"must be a finite number >= 0 (got {value})")
    if upper is not None and value > upper:
        raise InvalidField(field, f"must be <= {upper} (got {value})")


def _sizes(field: str, sizes: dict[str, int], known: dict[str, int] | None) -> None:
    for name, value in sizes.items():
        if known is not None and name not in known:
            raise InvalidField(f"{field}[{name!r}]", f"names no module-level integer constant of the spec "
                               f"(known: {', '.join(sorted(known)) or 'none'})")
        if value < 1 or value > _MAX_SIZE:
            raise InvalidField(f"{field}[{name!r}]", f"must be between 1 and {_MAX_SIZE} (got {value})")


def check_request(req: service_pb2.SubmitJobRequest, settings: ControllerSettings, kb_dir: Path) -> Checked:
    """Field checks that need no spec execution; sizes are checked against the outline later."""
    spec = req.spec
    if not spec.source.strip():
        raise InvalidField("spec.source", "is empty; send the full Python source of the spec")
    size = len(spec.source.encode("utf-8"))
    if size > settings.max_spec_bytes:
        raise InvalidField("spec.source", f"is {size} bytes; the limit is {settings.max_spec_bytes}")
    if "\x00" in spec.source:
        raise InvalidField("spec.source", "contains a NUL character")
    name = spec.name or "spec"
    if not _NAME.match(name):
        raise InvalidField("spec.name", f"{spec.name!r} must be 1-128 of letters, digits, '_', '.', '-'")
    if spec.source_key:
        raise InvalidField("spec.source_key", "is set by the controller; send spec.source instead")
    seen: set[str] = set()
    for i, case in enumerate(spec.test_cases):
        if not _NAME.match(case.name):
            raise InvalidField(f"spec.test_cases[{i}].name", f"{case.name!r} must be 1-128 of letters, digits, "
                               "'_', '.', '-'")
        if case.name in seen:
            raise InvalidField(f"spec.test_cases[{i}].name", f"{case.name!r} is used twice")
        seen.add(case.name)
        _sizes(f"spec.test_cases[{i}].sizes", dict(case.sizes), None)
    _sizes("spec.cpu_sizes", dict(spec.cpu_sizes), None)
    _finite_non_negative("spec.atol", spec.atol, 1e3)
    _finite_non_negative("spec.rtol", spec.rtol, 1e3)

    if not req.platform:
        raise InvalidField("platform", f"is required; known: {', '.join(sorted(load_platforms(kb_dir)))}")
    try:
        get_platform(kb_dir, req.platform)
    except UnknownPlatform as exc:
        raise InvalidField("platform", str(exc)) from exc

    config = job_pb2.JobConfig()
    config.CopyFrom(req.config)
    if config.budget < 0 or config.budget > settings.max_budget:
        raise InvalidField("config.budget", f"must be between 1 and {settings.max_budget} (0 = default "
                           f"{settings.default_budget}); got {config.budget}")
    config.budget = config.budget or settings.default_budget
    if config.parallelism < 0 or config.parallelism > settings.max_parallelism:
        raise InvalidField("config.parallelism", f"must be between 1 and {settings.max_parallelism} "
                           f"(0 = default {settings.default_parallelism}); got {config.parallelism}")
    config.parallelism = config.parallelism or settings.default_parallelism
    if config.policy not in job_pb2.SelectionPolicy.values():
        raise InvalidField("config.policy", f"unknown selection policy {config.policy}")
    _finite_non_negative("config.wall_clock_s", config.wall_clock_s, 30 * 86400)
    _finite_non_negative("config.max_cost_usd", config.max_cost_usd)
    _finite_non_negative("config.target_speedup", config.target_speedup, 1e6)
    _finite_non_negative("config.uct_c", config.uct_c, 1e3)
    if config.max_tokens < 0:
        raise InvalidField("config.max_tokens", f"must be >= 0 (got {config.max_tokens})")
    if config.patience < 0:
        raise InvalidField("config.patience", f"must be >= 0 (got {config.patience})")
    if not 0 <= config.islands <= 64:
        raise InvalidField("config.islands", f"must be between 0 and 64 (got {config.islands})")
    if config.migration_interval < 0:
        raise InvalidField("config.migration_interval", f"must be >= 0 (got {config.migration_interval})")
    if len(config.models) > 16:
        raise InvalidField("config.models", f"at most 16 models (got {len(config.models)})")
    for i, model in enumerate(config.models):
        if not model.strip() or len(model) > 128:
            raise InvalidField(f"config.models[{i}]", f"{model!r} must be a non-empty name of <= 128 characters")
    return Checked(name=name, platform=req.platform, config=config)


def check_sizes_against(spec: job_pb2.KernelSpec, known: dict[str, int]) -> None:
    """Size overrides must name the spec's module-level integer constants."""
    _sizes("spec.cpu_sizes", dict(spec.cpu_sizes), known)
    for i, case in enumerate(spec.test_cases):
        _sizes(f"spec.test_cases[{i}].sizes", dict(case.sizes), known)
