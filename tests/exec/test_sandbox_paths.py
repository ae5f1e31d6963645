"""A checkout or package dir under /tmp stays visible inside the sandbox's private /tmp."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kevolve.exec import sandbox


def test_code_under_tmp_is_readable_but_other_tmp_files_are_not(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    if not str(tmp_path.resolve()).startswith("/tmp/"):
        pytest.skip("pytest's tmp_path is not under /tmp on this machine")
    code_dir = tmp_path / "site"
    code_dir.mkdir()
    (code_dir / "mod.py").write_text("X = 41\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for candidates")
    monkeypatch.setattr(sys, "path", [*sys.path, str(code_dir)])

    mode, _ = sandbox.bwrap_status()
    if mode is None:
        pytest.skip("bubblewrap is not usable here")
    scratch = tmp_path / "scratch"
    result = sandbox.run(["cat", str(code_dir / "mod.py"), str(secret)], scratch=scratch,
                         limits=sandbox.Limits(timeout_s=20))
    assert result.mode == "bwrap"
    assert "X = 41" in result.stdout                  # code on sys.path under /tmp: visible
    assert "not for candidates" not in result.stdout  # the rest of /tmp: private
