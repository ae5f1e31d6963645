"""The submit-time spec probe runs the spec in the sandbox: what the spec can reach there,
and what its error can carry back to the caller."""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_specs import SOFTMAX, leaking_spec, snooping_spec
from listener import Listener

from kevolve.config import REPO_ROOT
from kevolve.exec import sandbox
from kevolve.specfile import SpecError
from services.controller.api import specprobe

needs_bwrap = pytest.mark.skipif(sandbox.bwrap_status()[0] is None, reason="bubblewrap cannot run here")


@needs_bwrap
@pytest.mark.parametrize("target", ["planted", "/etc/shadow", "repo"])
def test_an_error_carries_only_what_the_sandbox_shows(tmp_path: Path, target: str) -> None:
    planted = tmp_path / "other-tenant-spec.py"
    planted.write_text("SECRET-SOURCE-OF-ANOTHER-TENANT")
    path = {"planted": planted, "/etc/shadow": Path("/etc/shadow"), "repo": REPO_ROOT / "pyproject.toml"}[target]
    with pytest.raises(SpecError) as info:
        specprobe.probe(leaking_spec(path), {}, timeout_s=60)
    message = str(info.value)
    assert "leaked: unreadable" in message  # the spec's own error, and nothing it read
    assert "SECRET-SOURCE" not in message and "root:" not in message and "[project]" not in message


@needs_bwrap
def test_a_spec_that_swallows_its_errors_writes_and_sends_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    planted = home / "secret.txt"
    planted.write_text("HOST-SECRET")
    with Listener() as listener:
        result = specprobe.probe(snooping_spec([REPO_ROOT, home, Path.cwd()], [planted], listener.port), {}, 60)
    assert result.inputs == 1
    assert listener.received == []
    assert not (REPO_ROOT / "spec-was-here").exists() and not (home / "spec-was-here").exists()
    assert not (Path.cwd() / "spec-was-here").exists()


def test_a_good_spec_passes() -> None:
    assert specprobe.probe(SOFTMAX, {}, timeout_s=60).inputs == 1
