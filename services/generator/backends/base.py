"""The interface every generator backend implements (offline, openai, ...).

A backend turns one `GenerateRequest` (plus the texts the handler already fetched from
the object store) into one `Generation`. The handler owns everything around it: loading
the prompt/spec/parent code, storing the code under its content hash, publishing
`CandidateGenerated`, metrics. Backends therefore never touch NATS or the object store,
which keeps them testable in isolation and lets the handler treat them uniformly.

Contract:
- `generate` never raises for a problem of the candidate itself (unrecognized spec, LLM
  reply without a code block, refused request...): it returns `Generation(code=None,
  error="<plain reason>")`, and the controller records NO_CODE. It may raise only for
  infrastructure faults the handler should retry (the message is then redelivered).
- `tunables` describes how the candidate was made (`{"template": ..., "BLOCK_SIZE": ...}`
  for offline, `{"model": ...}` for LLMs); it is copied to `CandidateGenerated.tunables`
  and comes back later as `NodeSummary.tunables` of the parent/siblings.
- Usage fields are zero for backends that do not call a paid model.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kevolve.v1 import common_pb2, work_pb2


@dataclass
class Generation:
    """What one backend call produced."""

    code: str | None
    tunables: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    model: str = ""
    error: str = ""
    reply: str = ""                 # an LLM's raw reply, kept with the node
    job_cannot_continue: bool = False  # no model this job may use will answer it (see work.proto)

    def usage(self) -> common_pb2.Usage:
        return common_pb2.Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cost_usd=self.cost_usd,
            model=self.model,
        )


@runtime_checkable
class Backend(Protocol):
    """A source of candidate kernels. `name` goes into `CandidateGenerated.backend`."""

    name: str

    async def generate(
        self,
        request: work_pb2.GenerateRequest,
        prompt: str,
        spec_source: str,
        parent_code: str | None,
    ) -> Generation:
        """Produce one candidate for `request`.

        prompt: the rendered prompt text (empty if the request had no prompt_key).
        spec_source: the spec's Python source (the KernelBench-style reference).
        parent_code: the parent's candidate source, or None when expanding from the root
        or when the parent has no code.
        """
        ...

    async def aclose(self) -> None:
        """Release clients/pools; called once at service shutdown."""
        ...
