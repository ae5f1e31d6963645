"""Controller settings (env prefix KEVOLVE_CONTROLLER_), validated when built.

Connection settings (NATS, object store, KB) come from ``kevolve.config.CommonSettings``;
everything here is the controller's own: where the metadata DB is, how the gRPC API is
exposed and secured, and the engine's global limits.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from kevolve.config import REPO_ROOT

DEFAULT_DB = f"sqlite:///{REPO_ROOT / '.kevolve' / 'kevolve.db'}"

# Time a submission needs besides its probe: starting the probe's helper process, killing a
# probe at its deadline, storing the spec and the job, and the reply's trip back. A probe's
# deadline is cut this far short of the caller's, so a hanging spec is reported as such
# instead of the caller's own deadline expiring first.
PROBE_REPLY_MARGIN_S = 8.0


class ControllerSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KEVOLVE_CONTROLLER_", extra="ignore")

    database_url: str = Field(DEFAULT_DB, description="sqlite:///path or postgresql+psycopg://...")
    # Every interface, as a pod must serve; `kevolve up` binds 127.0.0.1 unless told otherwise.
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
    # Per-tenant limits (services/controller/tenancy.py). They are enforced on JobService calls
    # only: health checks and reflection never count, so no tenant can starve the probes.
    max_concurrent_rpcs: int = Field(1024, ge=2, le=100_000,
                                     description="JobService calls open at once over all tenants")
    calls_per_tenant: int = Field(32, ge=1, le=100_000, description="unary calls one tenant has open at once")
    watch_streams_per_tenant: int = Field(16, ge=1, le=100_000,
                                          description="WatchJob streams one tenant has open at once")
    submit_rate_per_min: float = Field(30.0, gt=0, le=100_000, description="submissions a minute per tenant")
    submit_burst: int = Field(10, ge=1, le=100_000, description="submissions one tenant may make at once")
    # Unary calls never run longer than this, whatever deadline the client sent (or none).
    max_deadline_s: float = Field(120.0, gt=0, le=3600)
    # A spec's import, Model(*get_init_inputs()) and get_inputs() must finish within this.
    spec_probe_timeout_s: float = Field(60.0, gt=0, le=600)
    spec_probe_workers: int = Field(4, ge=2, le=256, description="spec probes running at once, all tenants")
    spec_probes_per_tenant: int = Field(2, ge=1, le=255, description="spec probes of one tenant running at once")
    spec_probe_queue_s: float = Field(30.0, ge=0, le=600,
                                      description="how long a submission waits for a free probe slot")
    report_workers: int = Field(2, ge=2, le=64, description="exports and HTML reports rendered at once")
    reports_per_tenant: int = Field(1, ge=1, le=63, description="exports and reports of one tenant at once")
    max_in_flight: int = Field(16, ge=1, le=10_000, description="expansions in flight over all jobs")
    default_budget: int = Field(20, ge=1)
    max_budget: int = Field(10_000, ge=1)
    default_parallelism: int = Field(2, ge=1)
    max_parallelism: int = Field(64, ge=1)
    elites: int = Field(3, ge=0, le=32, description="best nodes sent as elites per expansion")
    siblings: int = Field(4, ge=0, le=64, description="siblings summarized per expansion")
    ancestors: int = Field(6, ge=0, le=64, description="ancestors summarized per expansion")
    health_interval_s: float = Field(1.0, gt=0, le=60)
    # A job whose evaluations wait this long with nothing pulling them (no pool of its
    # platform running) ends, naming the pool; a GPU pool scaled to zero needs time to start.
    pool_wait_s: float = Field(600.0, gt=0, le=86_400,
                               description="seconds work may wait for an evaluator pool that takes none")
    confirm_best: bool = Field(
        True, description="on platforms that measure speed, time a would-be new best once more and keep "
        "the second measurement (the best of N noisy timings is biased upward); a gain within the job's "
        "measured timing noise is not timed again and not taken as the best"
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
        self._check_limits()
        return self

    def _check_limits(self) -> None:
        # One tenant at every one of its own caps must still leave room for the others.
        if self.spec_probes_per_tenant >= self.spec_probe_workers:
            raise ValueError("KEVOLVE_CONTROLLER_SPEC_PROBES_PER_TENANT must be below "
                             "KEVOLVE_CONTROLLER_SPEC_PROBE_WORKERS, or one tenant can hold every probe")
        if self.reports_per_tenant >= self.report_workers:
            raise ValueError("KEVOLVE_CONTROLLER_REPORTS_PER_TENANT must be below "
                             "KEVOLVE_CONTROLLER_REPORT_WORKERS, or one tenant can hold every render thread")
        if self.calls_per_tenant + self.watch_streams_per_tenant >= self.max_concurrent_rpcs:
            raise ValueError("KEVOLVE_CONTROLLER_CALLS_PER_TENANT + KEVOLVE_CONTROLLER_WATCH_STREAMS_PER_TENANT "
                             "must be below KEVOLVE_CONTROLLER_MAX_CONCURRENT_RPCS, or one tenant can fill the server")
        # A submission waits for a probe slot, then probes; both must end before the server's
        # own cap on the call, so the caller hears why instead of a bare deadline.
        needed = self.spec_probe_queue_s + self.spec_probe_timeout_s + PROBE_REPLY_MARGIN_S
        if needed > self.max_deadline_s:
            raise ValueError(f"KEVOLVE_CONTROLLER_SPEC_PROBE_QUEUE_S + KEVOLVE_CONTROLLER_SPEC_PROBE_TIMEOUT_S "
                             f"+ {PROBE_REPLY_MARGIN_S:g}s must not exceed KEVOLVE_CONTROLLER_MAX_DEADLINE_S "
                             f"({needed:g}s > {self.max_deadline_s:g}s)")

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


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    bare = host.strip("[]")
    if bare.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False   # any other host name may resolve to a public address
