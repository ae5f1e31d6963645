"""Generator settings: backend resolution and validation at construction."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from kevolve.config import REPO_ROOT, CommonSettings
from services.generator.backends import build_backend
from services.generator.config import GeneratorSettings


def test_auto_backend_follows_the_llm_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KEVOLVE_GENERATOR_OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("KEVOLVE_GENERATOR_BACKEND", raising=False)
    assert GeneratorSettings().resolved_backend() == "offline"
    monkeypatch.setenv("KEVOLVE_GENERATOR_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert GeneratorSettings().resolved_backend() == "openai"
    monkeypatch.setenv("KEVOLVE_GENERATOR_BACKEND", "offline")
    assert GeneratorSettings().resolved_backend() == "offline"


def test_bad_values_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEVOLVE_GENERATOR_CONCURRENCY", "0")
    with pytest.raises(ValidationError, match="concurrency"):
        GeneratorSettings()


async def test_offline_backend_is_built_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KEVOLVE_GENERATOR_OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("KEVOLVE_GENERATOR_BACKEND", "offline")
    backend = build_backend(GeneratorSettings(), CommonSettings(kb_dir=REPO_ROOT / "kb"))
    assert backend.name == "offline"
    await backend.aclose()
