"""Controller fixtures: a fresh metadata DB on SQLite and on PostgreSQL per test."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import Engine

from services.controller.store import db

# The tests of each layer (api/, engine/, store/, outputs/) share controller_fakes.py, next to this file.
sys.path.insert(0, str(Path(__file__).parent))

PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=test connect_timeout=3"


def _pg_available() -> str | None:
    try:
        with psycopg.connect(PG_ADMIN):
            return None
    except psycopg.Error as exc:
        return f"PostgreSQL at 127.0.0.1:5432 unreachable ({exc}); `make test` starts it"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A brand-new PostgreSQL database, dropped afterwards."""
    reason = _pg_available()
    if reason:
        pytest.skip(reason)
    name = f"kv_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'meta.db'}"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def db_engine(db_url: str) -> Iterator[Engine]:
    engine = db.make_engine(db_url)
    db.upgrade(engine)
    yield engine
    engine.dispose()
