"""Evaluator settings (env prefix KEVOLVE_EVALUATOR_), validated when built."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from kevolve.exec.gpulock import DEFAULT_DIR as GPU_LOCK_DIR
from kevolve.exec.sandbox import Isolation
from kevolve.subjects import check_platform


class EvaluatorSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KEVOLVE_EVALUATOR_", extra="ignore")

    platform: str = Field(
        "cpu", description="pool to serve: cpu, cuda, mtia-sim or any kb/platforms.toml name"
    )
    trials: int = Field(5, ge=5, le=100, description="correctness trials per test case (fresh inputs each)")
    timeout_s: float = Field(120.0, gt=0, le=3600, description="wall-clock limit of one candidate run")
    # A candidate's first call compiles every kernel it defines: 0.7 s a kernel at the median
    # on an H200 host running 36 jobs, 1.3 s a kernel for a 71-kernel network (92 s), which
    # with its timing passed the 120 s limit (2026-11-28, the corpus sample's mobilenetv2).
    timeout_per_kernel_s: float = Field(
        1.5, ge=0, le=60, description="added to timeout_s for each @triton.jit function of the candidate "
        "(when the request sets no timeout of its own), up to max_timeout_s"
    )
    max_timeout_s: float = Field(
        480.0, gt=0, le=3600, description="the most a candidate's kernel count can raise its timeout to"
    )
    reference_timeout_s: float = Field(
        300.0, gt=0, le=3600, description="limit for the reference run of a spec"
    )
    memory_mb: int = Field(6144, ge=256, description="resident memory cap of a candidate's process group")
    max_procs: int = Field(16, ge=1, le=4096, description="processes a candidate's group may hold")
    metrics_port: int = Field(0, ge=0, le=65535, description="Prometheus /metrics port; 0 = off")
    scratch_dir: Path = Field(
        Path(tempfile.gettempdir()) / "kevolve-evaluator",
        description="private working directory (reference cache, per-run scratch)",
    )
    concurrency: int = Field(
        1,
        ge=1,
        le=64,
        description="evaluations at once; on a GPU pool above 1, candidates are prepared (started, "
        "compiled, checked) side by side and timed one at a time under the GPU lock. Faster search, "
        "but another candidate's preparation kernels can still disturb a timing batch (measured: "
        "docs/measurements/2026-11-23-suite-cuda-h100/notes.md); keep 1 where each number must stand alone",
    )
    screens_for: int = Field(
        0, ge=0, le=64,
        description="evaluator workers of other pools whose candidates this pool screens before they "
        "run there: it then takes `concurrency` slots for each, up to the host's cores and 64 (every "
        "candidate of those workers passes through it first, so with one worker's slots it would hold "
        "the others back); 0: `concurrency` alone",
    )
    gpu_lock_dir: Path = Field(
        GPU_LOCK_DIR, description="where the per-GPU timing lock lives (shared with the profiler)"
    )
    gpu_memory_mb: int = Field(
        -1, ge=-1, le=10_000_000,
        description="GPU memory the pool's runs on one GPU may reserve together (each reference run, "
        "candidate and baseline run reserves what it is expected to hold, and waits while the runs in "
        "flight leave too little); -1: 90% of the GPU's memory as nvidia-smi reports it; 0: no "
        "reservations")
    gpu_memory_wait_s: float = Field(
        600.0, ge=0, le=86_400,
        description="longest a run waits for GPU memory before it starts anyway")
    isolation: Isolation = Field(
        "required",
        description="'required': user code runs only under bubblewrap (no network, a private filesystem "
        "view) and is refused where it cannot start; 'preferred': run with limits only where it cannot "
        "(a single-user machine); 'off': never isolate (tests of the limits alone)",
    )
    warm_pools: int = Field(
        8, ge=1, le=256, description="warm zygotes kept at once (one per tenant and runner; the oldest stops)"
    )
    warm_pool: bool = Field(
        True,
        description="fork candidates from a warm, sandboxed zygote per tenant (skips importing torch, "
        "Triton and torch.compile per candidate); on a GPU pool the zygote never initialises CUDA, so "
        "every candidate still gets its own CUDA context",
    )
    keep_runs: bool = Field(False, description="keep per-run scratch directories (debugging)")
    min_free_disk_mb: int = Field(
        2048, ge=0,
        description="space the scratch disk keeps free: a reference run or a candidate's staged inputs "
                    "that would leave less fail as INFRA_ERROR (infra:disk) instead of filling the disk")
    max_file_mb: int = Field(
        4096, ge=64, le=1_048_576,
        description="largest file a sandboxed run may write: a reference whose input or output set of one "
                    "trial weighs more fails, naming the set and this setting (4 GiB: a decode step's "
                    "2 GiB key/value cache is one set; disk as a whole is kept by min_free_disk_mb)")
    reference_cache_entries: int = Field(
        64, ge=0, le=10_000, description="cached reference runs kept on disk"
    )
    reference_cache_mb: int = Field(
        16384, ge=0, le=10_000_000,
        description="disk the cached reference runs may take together (the least recently used go "
        "first; a run an evaluation is reading stays); they also give way before an evaluation is "
        "refused for disk")
    # A job's reference (inputs, expected outputs, weights) is shared through the object store
    # with the pool's other workers, up to this size; larger ones each worker computes itself.
    reference_share_mb: int = Field(512, ge=0, le=1_000_000,
                                    description="largest reference run shared through the object store (0 = none)")
    # The shared runs are a cache in the store (refcache/), not records: a worker that shares
    # one prunes them, at most once per reference_share_prune_s, to this age and this size.
    reference_share_keep_s: float = Field(
        21_600.0, ge=0, le=30 * 86_400,
        description="shared reference runs written longer ago than this are removed from the object store")
    reference_share_total_mb: int = Field(
        65_536, ge=0, le=100_000_000,
        description="shared reference runs in the object store together (the oldest go first)")
    reference_share_prune_s: float = Field(
        300.0, ge=0, le=86_400, description="least time between two prunes of the shared reference runs by one worker")
    job_baselines_max_age_s: float = Field(
        600.0, ge=0, le=86_400,
        description="a measuring pool times a job's eager and torch.compile baselines once (in a process "
        "without candidate code) and full-stage candidates alone against them, timing them again after "
        "this many seconds; confirmation runs always time all three interleaved; 0 = every candidate "
        "times its baselines beside it",
    )
    compare_on_gpu: bool = Field(
        True, description="a GPU pool's worker compares candidate outputs with the reference on its GPU "
        "(same operations, same numbers, a fraction of the host's time); false: on the host",
    )
    worker_name: str = Field("", description="name written into results; default host:pid")

    @property
    def slots(self) -> int:
        """Evaluations this pool runs at once: ``concurrency``, or for a screening pool one
        worker's ``concurrency`` for each worker it screens for, up to the host's cores (a
        screening run interprets the kernels on the host), never fewer than ``concurrency``."""
        if not self.screens_for:
            return self.concurrency
        return max(self.concurrency, min(os.cpu_count() or 1, 64, self.concurrency * self.screens_for))

    @field_validator("platform")
    @classmethod
    def _platform(cls, value: str) -> str:
        return check_platform(value)
