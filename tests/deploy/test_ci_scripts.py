"""The CI plumbing scripts: safe to run again and again, and silent when all is in place."""

from __future__ import annotations

import subprocess

import psycopg
import pytest

from kevolve.config import REPO_ROOT


@pytest.mark.parametrize("script", ["install-system-deps", "start-postgres"])
def test_script_is_idempotent_and_quiet_when_everything_is_there(script: str) -> None:
    for _ in range(2):
        out = subprocess.run(["bash", str(REPO_ROOT / ".ci" / script)], capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout == "" and out.stderr == ""


def test_postgres_answers_as_the_suite_expects_after_start_postgres() -> None:
    subprocess.run(["bash", str(REPO_ROOT / ".ci" / "start-postgres")], check=True, timeout=600)
    with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=test connect_timeout=3") as conn:
        assert conn.execute("select 1").fetchone() == (1,)
