"""kb/index.md must list exactly the files under kb/ (rebuild: python -m services.retriever.kbindex)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kevolve.config import REPO_ROOT
from services.retriever import kbindex

KB = REPO_ROOT / "kb"


def test_index_matches_the_tree() -> None:
    problems = kbindex.differences(KB)
    assert not problems, "kb/index.md is stale; run `python -m services.retriever.kbindex`:\n" + "\n".join(problems)


def test_every_indexed_file_has_a_description() -> None:
    entries = kbindex.read_index(KB)
    assert entries, "kb/index.md lists no files"
    assert all(e.description for e in entries), [e.path for e in entries if not e.description]


def _copy_kb(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    (kb / "guidance").mkdir(parents=True)
    (kb / "samples").mkdir()
    (kb / "guidance" / "a.md").write_text("# Alpha guide\n\n## Part\ntext\n")
    (kb / "samples" / "k.py").write_text('"""A sample kernel.\n\nMore."""\nimport triton\n')
    (kb / "platforms.toml").write_text("# The platform table\n[cpu]\n")
    return kb


def test_check_fails_when_a_file_is_added_and_passes_after_rebuild(tmp_path: Path) -> None:
    kb = _copy_kb(tmp_path)
    assert kbindex.main(["--kb-dir", str(kb)]) == 0
    text = (kb / "index.md").read_text()
    assert "- `guidance/a.md` — Alpha guide" in text
    assert "- `samples/k.py` — A sample kernel." in text
    assert "- `platforms.toml` — The platform table" in text
    assert kbindex.differences(kb) == []

    (kb / "hardware" / "new-chip").mkdir(parents=True)
    (kb / "hardware" / "new-chip" / "memory.md").write_text("# New chip memory\n")
    (kb / "guidance" / "a.md").unlink()
    cmd = [sys.executable, "-m", "services.retriever.kbindex", "--check", "--kb-dir", str(kb)]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    assert result.returncode == 1
    assert "not indexed: hardware/new-chip/memory.md" in result.stderr
    assert "indexed but missing from the tree: guidance/a.md" in result.stderr

    assert kbindex.main(["--kb-dir", str(kb)]) == 0
    assert kbindex.differences(kb) == []


def test_retitled_document_makes_the_index_stale(tmp_path: Path) -> None:
    kb = _copy_kb(tmp_path)
    kbindex.main(["--kb-dir", str(kb)])
    (kb / "guidance" / "a.md").write_text("# Beta guide\n")
    assert kbindex.differences(kb) == ["stale description for guidance/a.md: 'Alpha guide' (file says 'Beta guide')"]
