"""Settings every service shares (where the bus and the stores are).

Each service adds its own settings class with its own env prefix (KEVOLVE_<SERVICE>_...);
the connection settings below are common to all of them and read from KEVOLVE_*.
Invalid values fail when the settings are built, before any connection is tried.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlparse

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent


class CommonSettings(BaseSettings):
    """Where the bus and the object store are, and how to log."""

    model_config = SettingsConfigDict(env_prefix="KEVOLVE_", extra="ignore")

    nats_url: str = Field("nats://127.0.0.1:4222", description="NATS server with JetStream enabled")
    objects_url: str = Field(
        str(REPO_ROOT / ".kevolve" / "objects"),
        description="object store: a local directory path, file:///path, or s3://host:port/bucket",
    )
    s3_access_key: str = ""
    s3_secret_key: str = ""
    s3_secure: bool = False
    # Per-request connect/read timeout for S3: a blackholed endpoint must fail, not hang
    # (minio's own default is five minutes per try).
    s3_timeout_s: float = Field(20.0, gt=0, le=600)
    kb_dir: Path = Field(REPO_ROOT / "kb", description="knowledge base root")
    # Address of each service's /metrics listener: all interfaces in a pod (Prometheus
    # scrapes the pod IP); tests and single-machine runs pin it to 127.0.0.1.
    metrics_host: str = "0.0.0.0"
    log_json: bool = False
    log_level: str = "info"
    # How long a consumer may hold a work message before JetStream redelivers it.
    # Workers heartbeat (in_progress) at a third of this while they work.
    ack_wait_s: float = Field(30.0, gt=0.5, le=3600)
    max_deliver: int = Field(5, ge=1, le=100)

    @field_validator("nats_url")
    @classmethod
    def _nats_scheme(cls, value: str) -> str:
        scheme = urlparse(value).scheme
        if scheme not in {"nats", "tls", "ws", "wss"}:
            raise ValueError(f"KEVOLVE_NATS_URL must be nats://host:port (got {value!r})")
        return value

    @field_validator("objects_url")
    @classmethod
    def _objects_scheme(cls, value: str) -> str:
        scheme = urlparse(value).scheme
        if scheme not in {"", "file", "s3"}:
            raise ValueError(f"KEVOLVE_OBJECTS_URL must be a path, file:// or s3:// URL (got {value!r})")
        return value

    @field_validator("log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value.lower() not in {"debug", "info", "warning", "error"}:
            raise ValueError(f"KEVOLVE_LOG_LEVEL must be debug|info|warning|error (got {value!r})")
        return value.lower()


# A service's exit status for settings it cannot run with (sysexits' EX_CONFIG): `kevolve up`
# does not restart a service that exits with it, since it would fail the same way again.
EXIT_CONFIG = 78

S = TypeVar("S", bound=BaseSettings)


def settings_errors(cls: type[BaseSettings], exc: ValidationError) -> list[str]:
    """One line per invalid value, naming the environment variable that set it."""
    prefix = str(cls.model_config.get("env_prefix", ""))
    lines = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "?"
        variable = f"{prefix}{field}".upper() if error["loc"] else f"{prefix}*"
        given = error.get("input")
        shown = f" (got {given!r})" if isinstance(given, (str, int, float, bool)) else ""
        message = str(error["msg"]).removeprefix("Value error, ")
        lines.append(f"{variable}: {message}{shown}")
    return lines


def load_settings(service: str, cls: type[S]) -> S:
    """``cls()`` from the environment, or a line per invalid variable on stderr and exit
    ``EXIT_CONFIG``: a traceback naming a pydantic field is not what a user can act on."""
    try:
        return cls()
    except ValidationError as exc:
        for line in settings_errors(cls, exc):
            print(f"{service}: invalid setting {line}", file=sys.stderr)
        raise SystemExit(EXIT_CONFIG) from None
