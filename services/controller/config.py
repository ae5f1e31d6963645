"""Controller settings (env prefix KEVOLVE_CONTROLLER_), validated when built.

Connection settings (NATS, object store, KB) come from ``kevolve.config.CommonSettings``;
everything here is the controller's own: where the metadata DB is, how the gRPC API is
exposed and secured, and the engine's global limits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from kevolve.config import REPO_ROOT

DEFAULT_DB = f"sqlite:///{REPO_ROOT / '.kevolve' / 'kevolve.db'}"


class ControllerSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KEVOLVE_CONTROLLER_", extra="ignore")

    database_url: str = Field(DEFAULT_DB, description="sqlite:///path or postgresql+psycopg://...")
    grpc_host: str = Field("0.0.0.0", description="address the gRPC API binds")
    grpc_port: int = Field(50051, ge=0, le=65535, description="0 = pick a free port (logged)")
    port_file: Path | None = Field(None, description="write the bound gRPC port here (launcher)")
    metrics_port: int = Field(0, ge=0, le=65535, description="Prometheus /metrics port; 0 = off")
    # "tok1=tenantA,tok2=tenantB". Empty = open API, every job belongs to tenant "default".
    tokens: str = ""
    tls_cert: Path | None = None
    tls_key: Path | None = None
    max_message_bytes: int = Field(8 * 1024 * 1024, ge=64 * 1024, le=256 * 1024 * 1024)
    max_spec_bytes: int = Field(512 * 1024, ge=1024, le=64 * 1024 * 1024)
    max_concurrent_rpcs: int = Field(128, ge=1, le=100_000)
    # Unary calls never run longer than this, whatever deadline the client sent (or none).
    max_deadline_s: float = Field(120.0, gt=0, le=3600)
    spec_probe_timeout_s: float = Field(60.0, gt=0, le=3600)
    max_in_flight: int = Field(16, ge=1, le=10_000, description="expansions in flight over all jobs")
    default_budget: int = Field(20, ge=1)
    max_budget: int = Field(10_000, ge=1)
    default_parallelism: int = Field(2, ge=1)
    max_parallelism: int = Field(64, ge=1)
    elites: int = Field(3, ge=0, le=32, description="best nodes sent as elites per expansion")
    siblings: int = Field(4, ge=0, le=64, description="siblings summarized per expansion")
    ancestors: int = Field(6, ge=0, le=64, description="ancestors summarized per expansion")
    health_interval_s: float = Field(1.0, gt=0, le=60)
    confirm_best: bool = Field(
        True, description="on platforms that measure speed, time a would-be new best once more and keep "
        "the second measurement (the best of N noisy timings is biased upward)"
    )
    profile: Literal["improvements", "all", "none"] = Field(
        "improvements", description="which passing nodes are profiled: new bests (and SUSPICIOUS), all, none"
    )
    # Reuse matches an earlier job when every size is within this factor of the new one.
    reuse_size_factor: float = Field(4.0, ge=1.0)

    @field_validator("database_url")
    @classmethod
    def _db_scheme(cls, value: str) -> str:
        if not value.startswith(("sqlite://", "postgresql")):
            raise ValueError(f"KEVOLVE_CONTROLLER_DATABASE_URL must be sqlite:///... or postgresql+psycopg://... "
                             f"(got {value!r})")
        return value

    @field_validator("tokens")
    @classmethod
    def _tokens(cls, value: str) -> str:
        parse_tokens(value)
        return value

    @model_validator(mode="after")
    def _tls_pair(self) -> ControllerSettings:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("KEVOLVE_CONTROLLER_TLS_CERT and KEVOLVE_CONTROLLER_TLS_KEY must be set together")
        for path in (self.tls_cert, self.tls_key):
            if path is not None and not path.is_file():
                raise ValueError(f"TLS file {path} does not exist")
        if self.default_budget > self.max_budget:
            raise ValueError("KEVOLVE_CONTROLLER_DEFAULT_BUDGET exceeds KEVOLVE_CONTROLLER_MAX_BUDGET")
        return self

    def token_map(self) -> dict[str, str]:
        return parse_tokens(self.tokens)


def parse_tokens(value: str) -> dict[str, str]:
    """``tok=tenant,...`` -> {token: tenant}; a malformed entry fails the settings."""
    out: dict[str, str] = {}
    for entry in filter(None, (p.strip() for p in value.split(","))):
        token, sep, tenant = entry.partition("=")
        if not sep or not token.strip() or not tenant.strip():
            raise ValueError(f"KEVOLVE_CONTROLLER_TOKENS entry {entry!r} is not token=tenant")
        out[token.strip()] = tenant.strip()
    return out
