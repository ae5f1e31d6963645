"""Generator backends and the factory that picks one from the settings.

The openai backend lives in `openai_backend.py` (written separately) and is imported only
when asked for, so the offline default needs no LLM client. It must expose
`build(settings: GeneratorSettings, common: CommonSettings) -> Backend`.
"""
from __future__ import annotations

import importlib

from kevolve.config import CommonSettings
from services.generator.backends.base import Backend, Generation
from services.generator.config import GeneratorSettings

__all__ = ["Backend", "Generation", "build_backend"]


def build_backend(settings: GeneratorSettings, common: CommonSettings) -> Backend:
    kind = settings.resolved_backend()
    if kind == "offline":
        from services.generator.backends.offline import OfflineBackend

        return OfflineBackend(templates_dir=common.kb_dir / "templates", trace_timeout_s=settings.trace_timeout_s)
    try:
        module = importlib.import_module("services.generator.backends.openai_backend")
    except ModuleNotFoundError as exc:
        if exc.name != "services.generator.backends.openai_backend":
            raise
        raise ValueError(
            "KEVOLVE_GENERATOR_BACKEND=openai, but this build has no openai backend "
            "(services/generator/backends/openai_backend.py); use backend=offline"
        ) from exc
    if not hasattr(module, "build"):
        raise ValueError("services/generator/backends/openai_backend.py defines no build(settings, common)")
    backend: Backend = module.build(settings, common)
    return backend
