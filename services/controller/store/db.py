"""Connecting to the metadata DB, migrating it, and the queries that need real SQL.

SQLite runs in WAL mode (readers never block the writer) and every transaction starts
with ``BEGIN IMMEDIATE``: a deferred transaction that reads and then writes can fail with
SQLITE_BUSY despite busy_timeout, an immediate one waits for the lock up front.
PostgreSQL needs none of that.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, literal, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from kevolve.modelchoice import Observation, reward

from .models import ExpansionRow, NodeRow

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True, future=True)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Take transaction control away from pysqlite so the begin hook below decides.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    # ConfigParser interpolates '%': escape it so passwords with % survive.
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Create or upgrade the schema (the same migrations the CLI `alembic upgrade` runs)."""
    cfg = alembic_config(engine.url.render_as_string(hide_password=False))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def downgrade(engine: Engine, revision: str) -> None:
    cfg = alembic_config(engine.url.render_as_string(hide_password=False))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def lineage(session: Session, node_id: str) -> list[NodeRow]:
    """The node and its ancestors up to the root, nearest first: one WITH RECURSIVE query."""
    chain = (
        select(NodeRow.id, NodeRow.parent_id, literal(0).label("depth"))
        .where(NodeRow.id == node_id)
        .cte("chain", recursive=True)
    )
    chain = chain.union_all(
        select(NodeRow.id, NodeRow.parent_id, (chain.c.depth + 1).label("depth")).join(
            chain, NodeRow.id == chain.c.parent_id
        )
    )
    rows = session.execute(
        select(NodeRow).join(chain, NodeRow.id == chain.c.id).order_by(chain.c.depth)
    ).scalars()
    return list(rows)


def model_observations(session: Session, job_id: str) -> list[Observation]:
    """(model, reward) of every judged node of a job made by an expansion with a chosen model,
    in the order the nodes were made (``kevolve.modelchoice`` learns from them)."""
    rows = session.execute(
        select(ExpansionRow.model, NodeRow.verdict, NodeRow.fitness)
        .join(NodeRow, NodeRow.expansion_id == ExpansionRow.id)
        .where(ExpansionRow.job_id == job_id, NodeRow.verdict != 0)
        .order_by(NodeRow.seq)
    ).all()
    return [(model, reward(verdict, fitness)) for model, verdict, fitness in rows]


def ping(engine: Engine) -> bool:
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        return True
    except Exception:
        return False
