"""Profiler settings (env prefix KEVOLVE_PROFILER_), validated when built."""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from kevolve.exec.gpulock import DEFAULT_DIR as GPU_LOCK_DIR
from kevolve.exec.sandbox import Isolation
from kevolve.subjects import check_platform


class ProfilerSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KEVOLVE_PROFILER_", extra="ignore")

    platform: str = Field("cpu", description="pool to serve: cpu, cuda, mtia-sim or a kb/platforms.toml name")
    metrics_port: int = Field(0, ge=0, le=65535, description="Prometheus /metrics port; 0 = off")
    concurrency: int = Field(1, ge=1, le=16, description="profiles at once (1 per GPU: ncu serialises)")
    timeout_s: float = Field(300.0, gt=0, le=3600, description="wall-clock limit of one profiling child")
    ncu_timeout_s: float = Field(600.0, gt=0, le=7200, description="wall-clock limit of one ncu run")
    memory_mb: int = Field(6144, ge=256, description="resident memory cap of a profiling child's group")
    max_procs: int = Field(64, ge=1, le=4096, description="processes a profiling child's group may hold")
    isolation: Isolation = Field("required", description="'required': profiling children run only under "
                                 "bubblewrap; 'preferred': with limits only where it cannot start; 'off': never")
    ncu_path: str = Field("ncu", description="Nsight Compute CLI (name on PATH or a path); '' = never run ncu")
    ncu_max_launches: int = Field(20, ge=1, le=1000, description="kernel launches ncu profiles per request")
    iterations: int = Field(20, ge=1, le=10_000, description="forward calls under torch.profiler (cuda)")
    scratch_dir: Path = Field(Path(tempfile.gettempdir()) / "kevolve-profiler",
                              description="private working directory for profiling runs")
    gpu_lock_dir: Path = Field(GPU_LOCK_DIR, description="per-GPU lock shared with the evaluator: a GPU "
                               "profile never runs while a candidate is being timed on that GPU")

    @field_validator("platform")
    @classmethod
    def _platform(cls, value: str) -> str:
        return check_platform(value)
