"""The offline generator traces specs only in the sandbox: a spec that attacks the generator's
machine while tracing reaches nothing, and tenants' traces are kept apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_specs import snooping_spec
from listener import Listener

from kevolve.exec import sandbox
from kevolve.config import REPO_ROOT
from kevolve.v1 import work_pb2
from services.generator.backends.offline import OfflineBackend

needs_bwrap = pytest.mark.skipif(sandbox.bwrap_status()[0] is None, reason="bubblewrap cannot run here")


@needs_bwrap
async def test_tracing_a_hostile_spec_leaks_and_writes_nothing(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
    monkeypatch.setenv("KEVOLVE_GENERATOR_OPENAI_API_KEY", "sk-openai-value")
    monkeypatch.setenv("KEVOLVE_CONTROLLER_TOKENS", "tok-a=a,tok-b=b")
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text("HOST-SECRET")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    backend = OfflineBackend(REPO_ROOT / "kb" / "templates", trace_timeout_s=120, scratch_dir=tmp_path / "scratch")
    request = work_pb2.GenerateRequest()
    request.expand.tenant = "a"
    with Listener() as listener:
        spec = snooping_spec([REPO_ROOT, home, run_dir, Path.cwd()], [home / "secret.txt"], listener.port)
        gen = await backend.generate(request, "", spec, None)
    await backend.aclose()
    assert gen.code, gen.error  # the spec itself still works: a softmax kernel came out
    assert listener.received == []
    for place in (REPO_ROOT, home, run_dir, Path.cwd()):
        assert not (place / "spec-was-here").exists(), place
