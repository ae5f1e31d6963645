"""Generator settings (env prefix KEVOLVE_GENERATOR_), validated when built.

Backends that need settings add their fields here (the openai backend's
`openai_base_url`, `openai_api_key`, `model`, ... live next to the generic ones), so one
settings object describes the whole service.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from kevolve.exec.sandbox import Isolation


class GeneratorSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KEVOLVE_GENERATOR_", extra="ignore")

    backend: Literal["auto", "offline", "openai"] = Field(
        "auto", description="auto = openai when openai_base_url is set, else offline"
    )
    metrics_port: int = Field(0, ge=0, le=65535, description="Prometheus /metrics port; 0 = off")
    concurrency: int = Field(2, ge=1, le=256, description="GenerateRequests handled at once")
    # The offline backend traces the spec in a child process (spec code is user code);
    # a spec that hangs at import or in forward is cut off after this long.
    trace_timeout_s: float = Field(60.0, gt=0, le=3600)
    trace_memory_mb: int = Field(4096, ge=256, description="resident memory cap of a tracing child")
    scratch_dir: Path = Field(Path(tempfile.gettempdir()) / "kevolve-generator",
                              description="private working directory of the sandboxed tracing children")
    isolation: Isolation = Field("required", description="'required': specs are traced only under bubblewrap "
                                 "(no network, a private filesystem view); 'preferred': with limits only where "
                                 "it cannot start; 'off': never")
    openai_base_url: str = Field("", description="OpenAI-compatible endpoint; empty = no LLM")
    # --- openai backend (services/generator/backends/openai_backend.py) ---
    openai_api_key: SecretStr = Field(SecretStr(""), description="bearer key; local servers need none")
    # Comma-separated (or JSON list). ExpandRequest.model picks one per call; when it is empty,
    # kevolve.modelchoice picks among these.
    openai_models: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["gpt-4o-mini"])
    openai_timeout_s: float = Field(180.0, gt=0, le=3600, description="one HTTP request's deadline")
    openai_max_attempts: int = Field(5, ge=1, le=20, description="tries per call on 429/5xx/timeouts")
    openai_retry_initial_s: float = Field(1.0, gt=0, le=60, description="first backoff; doubles per retry")
    openai_retry_max_s: float = Field(30.0, gt=0, le=600, description="longest backoff between tries")
    openai_concurrency: int = Field(4, ge=1, le=256, description="requests in flight to the endpoint")
    openai_max_tokens: int = Field(8192, ge=16, le=1_000_000, description="completion token cap per call")
    openai_temperature: float = Field(0.7, ge=0, le=2)
    # Request parameters per model, as JSON, over the two above: {"o3": {"max_completion_tokens":
    # 32000, "temperature": null, "reasoning_effort": "high"}}. null leaves a parameter out (a
    # reasoning model refuses any temperature); max_completion_tokens replaces max_tokens.
    openai_model_settings: dict[str, dict[str, object]] = Field(default_factory=dict)
    # A job stops calling a model that refused this many requests in a row with the same
    # client error (a bad parameter, a missing model): no retry changes that answer.
    openai_max_identical_refusals: int = Field(3, ge=1, le=100)
    # $ per 1M tokens, [input, output], by model name, as JSON: {"gpt-4o-mini": [0.15, 0.6]}.
    # Models missing from the table are counted at $0 and their candidates say so.
    openai_prices: dict[str, tuple[float, float]] = Field(default_factory=dict)
    openai_bandit: Literal["ucb1", "thompson"] = Field("ucb1", description="model choice when the request names none")
    # "user" prepends the system part to the user message, for chat templates that drop a
    # system role (llama.cpp's gemma format does, silently).
    openai_system_role: Literal["system", "user"] = Field("system")

    @field_validator("openai_models", mode="before")
    @classmethod
    def _split_models(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            value = [part.strip() for part in text.split(",")]
        if isinstance(value, list):
            value = [str(v).strip() for v in value if str(v).strip()]
            if not value:
                raise ValueError("KEVOLVE_GENERATOR_OPENAI_MODELS names no model")
        return value

    @field_validator("openai_prices")
    @classmethod
    def _prices(cls, value: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        for model, (inp, out) in value.items():
            if inp < 0 or out < 0:
                raise ValueError(f"KEVOLVE_GENERATOR_OPENAI_PRICES: negative price for {model!r}")
        return value

    @field_validator("openai_model_settings")
    @classmethod
    def _model_settings(cls, value: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
        allowed = {"max_tokens", "max_completion_tokens", "temperature", "top_p", "reasoning_effort", "seed",
                   "presence_penalty", "frequency_penalty", "extra_body"}
        for model, params in value.items():
            unknown = sorted(set(params) - allowed)
            if unknown:
                raise ValueError(f"KEVOLVE_GENERATOR_OPENAI_MODEL_SETTINGS[{model!r}]: unknown parameter(s) "
                                 f"{', '.join(unknown)} (known: {', '.join(sorted(allowed))})")
        return value

    def resolved_backend(self) -> Literal["offline", "openai"]:
        if self.backend == "auto":
            return "openai" if self.openai_base_url else "offline"
        return self.backend
