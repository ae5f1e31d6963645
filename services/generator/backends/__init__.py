"""Generator backends (``offline``: the template operator; ``openai``: any OpenAI-compatible
endpoint) and the factory that builds the one the settings name.

Each backend is imported only when chosen, so an offline generator never loads the LLM
client and an LLM generator never loads the tracer and templates.
"""
from __future__ import annotations

from kevolve.config import CommonSettings
from services.generator.backends.base import Backend, Generation
from services.generator.config import GeneratorSettings

__all__ = ["Backend", "Generation", "build_backend"]


def build_backend(settings: GeneratorSettings, common: CommonSettings) -> Backend:
    if settings.resolved_backend() == "offline":
        from services.generator.backends.offline import OfflineBackend

        return OfflineBackend(templates_dir=common.kb_dir / "templates", trace_timeout_s=settings.trace_timeout_s,
                              scratch_dir=settings.scratch_dir, isolation=settings.isolation,
                              trace_memory_mb=settings.trace_memory_mb)
    from services.generator.backends.openai_backend import OpenAIBackend

    return OpenAIBackend(settings)
