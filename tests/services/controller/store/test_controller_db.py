"""The metadata store on both SQLite and PostgreSQL: schema, lineage, migrations."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import Engine, inspect, select
from sqlalchemy.exc import IntegrityError

from kevolve.v1 import common_pb2, job_pb2
from services.controller.store import db
from services.controller.store.models import ExpansionRow, JobRow, NodeRow


def _job(job_id: str = "j1") -> JobRow:
    return JobRow(id=job_id, tenant="t", spec_name="softmax", spec_source_key="specs/x.py",
                  spec_fingerprint="f" * 64, platform="cpu", state=job_pb2.RUNNING, config={"budget": 5})


def _node(node_id: str, parent: str | None, seq: int, job_id: str = "j1") -> NodeRow:
    return NodeRow(id=node_id, job_id=job_id, parent_id=parent, seq=seq, status=job_pb2.DONE,
                   expansion_id=f"e-{node_id}", verdict=common_pb2.PASSED, fitness=float(seq),
                   tunables={"BLOCK": str(seq)}, case_fitness={"small": 1.5})


def test_lineage_is_one_recursive_query(db_engine: Engine) -> None:
    factory = db.session_factory(db_engine)
    with factory.begin() as s:
        s.add(_job())
        s.flush()
        # a -> b -> c -> d, plus a side branch a -> x
        for i, (nid, parent) in enumerate([("a", None), ("b", "a"), ("c", "b"), ("d", "c"), ("x", "a")]):
            s.add(_node(nid, parent, i))
            s.flush()
    statements: list[str] = []

    from sqlalchemy import event

    @event.listens_for(db_engine, "before_cursor_execute")
    def _count(conn, cursor, statement, params, context, executemany):  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            statements.append(statement)

    with factory() as s:
        chain = db.lineage(s, "d")
        assert [n.id for n in chain] == ["d", "c", "b", "a"]
        assert chain[0].tunables == {"BLOCK": "3"} and chain[0].case_fitness == {"small": 1.5}
        assert [n.id for n in db.lineage(s, "x")] == ["x", "a"]
        assert db.lineage(s, "missing") == []
    event.remove(db_engine, "before_cursor_execute", _count)
    lineage_sql = [st for st in statements if "RECURSIVE" in st.upper()]
    assert len(lineage_sql) == 3 and len(statements) == 3


def test_an_expansion_yields_at_most_one_node(db_engine: Engine) -> None:
    factory = db.session_factory(db_engine)
    with factory.begin() as s:
        s.add(_job())
        s.flush()
        s.add(ExpansionRow(id="e-a", job_id="j1", decision=0))
        s.flush()
        s.add(_node("a", None, 0))
    with pytest.raises(IntegrityError):
        with factory.begin() as s:
            dup = _node("a2", None, 1)
            dup.expansion_id = "e-a"
            s.add(dup)
    with pytest.raises(IntegrityError):  # one decision index issues one expansion
        with factory.begin() as s:
            s.add(ExpansionRow(id="e-b", job_id="j1", decision=0))
    with factory() as s:
        assert s.scalars(select(NodeRow.id)).all() == ["a"]


def test_concurrent_writers_do_not_fail(db_engine: Engine) -> None:
    """Read-then-write transactions from several threads all commit (BEGIN IMMEDIATE on SQLite)."""
    factory = db.session_factory(db_engine)
    with factory.begin() as s:
        s.add(_job())
    errors: list[BaseException] = []

    def bump() -> None:
        try:
            for _ in range(20):
                with factory.begin() as s:
                    job = s.get(JobRow, "j1", with_for_update=True)
                    assert job is not None
                    job.candidates += 1
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with factory() as s:
        assert s.get(JobRow, "j1").candidates == 80  # type: ignore[union-attr]


def test_migrations_round_trip(db_url: str) -> None:
    engine = db.make_engine(db_url)
    try:
        db.upgrade(engine)
        tables = set(inspect(engine).get_table_names())
        assert {"jobs", "nodes", "expansions", "alembic_version"} <= tables
        db.downgrade(engine, "base")
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        db.upgrade(engine)
        cols = {c["name"] for c in inspect(engine).get_columns("nodes")}
        assert {"attempt", "dispatched_attempt", "expansion_id", "case_fitness"} <= cols
        # The migrated schema is the models' schema: a full row round-trips.
        factory = db.session_factory(engine)
        with factory.begin() as s:
            s.add(_job())
            s.flush()
            s.add(_node("a", None, 0))
        with factory() as s:
            assert s.get(NodeRow, "a").tunables == {"BLOCK": "0"}  # type: ignore[union-attr]
    finally:
        engine.dispose()
