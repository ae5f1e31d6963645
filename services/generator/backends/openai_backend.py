"""The LLM backend: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp...).

One call per GenerateRequest: the stored prompt (kevolve.promptdoc: system + user parts)
goes out, code comes back from the reply, which may be a fenced block (the one defining
ModelNew wins), a bare whole file, or SEARCH/REPLACE edits applied to the parent's code.
Anything else is a NO_CODE generation with the reason, never an exception.

Rate limits, server errors, timeouts and dropped connections are retried with exponential
backoff (tenacity); only when the tries run out does the call raise, so the bus redelivers.
A semaphore caps the requests in flight to the endpoint. Every call is accounted: tokens
from the reply's usage (estimated as chars/4 when a server omits it) and dollars from the
configured price table.
"""

from __future__ import annotations

import ast
import asyncio
import re
import zlib
from dataclasses import dataclass

import openai
import structlog
from prometheus_client import Counter
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from kevolve import promptdoc
from kevolve.modelchoice import model_for, observations_from_nodes
from kevolve.v1 import work_pb2
from services.generator.backends.base import Generation
from services.generator.config import GeneratorSettings

log = structlog.get_logger("generator.openai")

TOKENS = Counter("kevolve_llm_tokens_total", "LLM tokens, by model and kind (prompt/completion)", ["model", "kind"])
COST = Counter("kevolve_llm_cost_usd_total", "LLM spend in US dollars, by model", ["model"])


class ReplyError(ValueError):
    """The reply holds no usable code; the message says why (it becomes CandidateGenerated.error)."""


# ---------------------------------------------------------------- reply -> code

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_OPEN_FENCE = re.compile(r"```[ \t]*(?:python|py)?[^\n]*\n", re.IGNORECASE)
_EDIT = re.compile(r"<{5,9}[ \t]*SEARCH[ \t]*\n(.*?)\n?={5,9}[ \t]*\n(.*?)\n?>{5,9}[ \t]*REPLACE", re.DOTALL)
_DEFINES_MODELNEW = re.compile(r"^class\s+ModelNew\b", re.MULTILINE)


def _check(code: str, where: str) -> str:
    code = code.strip("\n") + "\n"
    try:
        ast.parse(code)
    except SyntaxError as exc:
        raise ReplyError(f"{where} does not parse: {exc.msg} (line {exc.lineno})") from exc
    if not _DEFINES_MODELNEW.search(code):
        raise ReplyError(f"{where} does not define class ModelNew")
    return code


def apply_edits(parent: str, reply: str) -> str:
    """Apply the reply's SEARCH/REPLACE blocks in order; a block that does not match is an error."""
    blocks = _EDIT.findall(reply)
    if not blocks:
        raise ReplyError("reply has no complete SEARCH/REPLACE block")
    code = parent
    for number, (search, replace) in enumerate(blocks, 1):
        if not search.strip():
            raise ReplyError(f"SEARCH/REPLACE block {number} has an empty SEARCH part")
        count = code.count(search)
        if count == 1:
            code = code.replace(search, replace, 1)
            continue
        # Whole lines next: "import torch" is a substring of "import torch.nn" but one line of its
        # own; and models often get trailing whitespace wrong, so lines are compared right-stripped.
        loose = _loose_replace(code, search, replace)
        if loose is None and count > 1:
            raise ReplyError(f"SEARCH block {number} matches the current kernel {count} times; it must be unique")
        if loose is None:
            first = next((line for line in search.splitlines() if line.strip()), "")
            raise ReplyError(f"SEARCH block {number} does not match the current kernel (first line: {first.strip()!r})")
        code = loose
    return code


def _loose_replace(code: str, search: str, replace: str) -> str | None:
    lines = code.splitlines()
    want = [line.rstrip() for line in search.splitlines()]
    hits = [i for i in range(len(lines) - len(want) + 1) if [x.rstrip() for x in lines[i:i + len(want)]] == want]
    if len(hits) != 1:
        return None
    i = hits[0]
    return "\n".join(lines[:i] + replace.splitlines() + lines[i + len(want):]) + "\n"


def extract_code(reply: str, parent_code: str | None, truncated: bool = False) -> tuple[str, str]:
    """(code, how) from an LLM reply; how is "edit", "fenced" or "whole". Raises ReplyError."""
    if not reply.strip():
        raise ReplyError("reply is empty")
    if _EDIT.search(reply):
        if not parent_code:
            raise ReplyError("reply holds SEARCH/REPLACE edits but there is no current kernel to apply them to")
        return _check(apply_edits(parent_code, reply), "the edited kernel"), "edit"
    if re.search(r"<{5,9}[ \t]*SEARCH", reply):
        raise ReplyError("reply has an incomplete SEARCH/REPLACE block" + (" (truncated)" if truncated else ""))
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(reply)]
    code_blocks = [body for lang, body in blocks if lang in ("", "python", "py", "python3")]
    with_model = [body for body in code_blocks if _DEFINES_MODELNEW.search(body)]
    if with_model:
        return _check(with_model[-1], "the code block defining ModelNew"), "fenced"  # the last is the revision
    tail = reply[reply.rfind("```"):] if reply.count("```") % 2 == 1 else ""
    if tail and _DEFINES_MODELNEW.search(tail):
        body = _OPEN_FENCE.sub("", tail, count=1)
        try:
            return _check(body, "the unterminated code block"), "fenced"
        except ReplyError as exc:
            raise ReplyError(f"reply was cut off inside its code block ({exc})") from exc
    if code_blocks:
        raise ReplyError(f"reply has {len(code_blocks)} code block(s) but none defines class ModelNew")
    if _DEFINES_MODELNEW.search(reply):
        # A whole-file reply without fences: from the first import to the end.
        start = re.search(r"^(?:import|from)\s+\w", reply, re.MULTILINE)
        return _check(reply[start.start() if start else 0:], "the reply (read as a whole file)"), "whole"
    raise ReplyError("reply held no code: no fenced block, no SEARCH/REPLACE edit, no class ModelNew"
                     + (" (the reply was truncated at the token limit)" if truncated else ""))


# ---------------------------------------------------------------- the backend


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


@dataclass
class _Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    estimated: bool


class OpenAIBackend:
    name = "openai"

    def __init__(self, settings: GeneratorSettings) -> None:
        if not settings.openai_base_url:
            raise ValueError("the openai backend needs KEVOLVE_GENERATOR_OPENAI_BASE_URL")
        self.settings = settings
        self.client = openai.AsyncOpenAI(
            base_url=settings.openai_base_url,
            # The client insists on a key; local servers ignore whatever is sent.
            api_key=settings.openai_api_key.get_secret_value() or "no-key",
            timeout=settings.openai_timeout_s,
            max_retries=0,  # retries are ours (tenacity), so backoff and accounting are in one place
        )
        self.semaphore = asyncio.Semaphore(settings.openai_concurrency)
        # Parameters an endpoint refused for a model, learned from its 400 answers.
        self._learned: dict[str, dict[str, object]] = {}
        # (job, model) -> (the client error, how many times in a row)
        self._refusals: dict[tuple[str, str], tuple[str, int]] = {}

    def pick_model(self, request: work_pb2.GenerateRequest) -> str:
        expand = request.expand
        if expand.model:
            return expand.model
        history = [expand.parent, *expand.ancestors, *expand.siblings, *expand.elites]
        return model_for(self.settings.openai_models, observations_from_nodes(history),
                         method=self.settings.openai_bandit, seed=expand.seed ^ zlib.crc32(expand.expansion_id.encode()))

    def price(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        table = self.settings.openai_prices
        if model not in table:
            return None
        inp, out = table[model]
        return (prompt_tokens * inp + completion_tokens * out) / 1e6

    def params(self, model: str) -> dict[str, object]:
        """The request parameters for ``model``: the defaults, the model's own settings
        (KEVOLVE_GENERATOR_OPENAI_MODEL_SETTINGS; null leaves one out), then what its endpoint
        taught us by refusing."""
        params: dict[str, object] = {"max_tokens": self.settings.openai_max_tokens,
                                     "temperature": self.settings.openai_temperature}
        for layer in (self.settings.openai_model_settings.get(model, {}), self._learned.get(model, {})):
            if "max_completion_tokens" in layer:
                params.pop("max_tokens", None)
            params.update(layer)
        return {k: v for k, v in params.items() if v is not None}

    def _learn(self, model: str, exc: openai.APIStatusError) -> bool:
        """Adjust the parameters a 400 answer refused (a reasoning model's max_tokens or
        temperature); True when there is something new to try."""
        text = f"{_param(exc)} {_short(exc)}".lower()
        learned = self._learned.setdefault(model, {})
        current = self.params(model)
        if "max_tokens" in text and "max_completion_tokens" in text and "max_tokens" in current:
            learned["max_completion_tokens"] = current["max_tokens"]
            learned["max_tokens"] = None
        elif "temperature" in text and "temperature" in current:
            learned["temperature"] = None
        else:
            return False
        log.warning("endpoint refused a parameter; adjusted for this model", model=model, now=self.params(model))
        return True

    async def _call_learning(self, model: str, messages: list[dict[str, str]]) -> _Reply:
        """``_call``, sent again after each parameter the endpoint refused and we could adjust
        (at most once per kind of parameter)."""
        for _ in range(3):
            try:
                return await self._call(model, messages)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if not self._learn(model, exc):
                    raise
        return await self._call(model, messages)

    async def _call(self, model: str, messages: list[dict[str, str]]) -> _Reply:
        async with self.semaphore:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(_transient),
                wait=wait_exponential(multiplier=self.settings.openai_retry_initial_s, max=self.settings.openai_retry_max_s),
                stop=stop_after_attempt(self.settings.openai_max_attempts),
                reraise=True,
                before_sleep=lambda state: log.warning(
                    "llm call failed; retrying", model=model, attempt=state.attempt_number,
                    error=repr(state.outcome.exception()) if state.outcome else ""),
            ):
                with attempt:
                    params = self.params(model)
                    extra = params.pop("extra_body", None)
                    response = await self.client.chat.completions.create(
                        model=model, messages=messages, extra_body=extra, **params,  # type: ignore[arg-type]
                    )
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content or "") if choice and choice.message else ""
        usage = response.usage
        if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
            return _Reply(text, usage.prompt_tokens or 0, usage.completion_tokens or 0,
                          (choice.finish_reason or "") if choice else "", False)
        chars = sum(len(m["content"]) for m in messages)
        return _Reply(text, (chars + 3) // 4, (len(text) + 3) // 4, (choice.finish_reason or "") if choice else "", True)

    async def generate(self, request: work_pb2.GenerateRequest, prompt: str, spec_source: str,
                       parent_code: str | None) -> Generation:
        try:
            doc = promptdoc.parse(prompt) if prompt.strip() else _bare_prompt(spec_source)
        except promptdoc.PromptFormatError as exc:
            return Generation(code=None, error=f"prompt unusable: {exc}")
        if doc.system and self.settings.openai_system_role == "user":
            messages = [{"role": "user", "content": f"{doc.system}\n\n{doc.user}"}]
        else:
            messages = ([{"role": "system", "content": doc.system}] if doc.system else []) + [
                {"role": "user", "content": doc.user}]
        job = request.expand.job_id
        candidates = [request.expand.model] if request.expand.model else list(self.settings.openai_models)
        usable = [m for m in candidates if not self._stopped(job, m)]
        if not usable:
            return self._cannot_continue(job, candidates)
        model = self.pick_model(request)
        if model not in usable:
            model = usable[0]
        try:
            reply = await self._call_learning(model, messages)
        except (openai.BadRequestError, openai.UnprocessableEntityError, openai.NotFoundError,
                openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            # The endpoint refused the request (too long, a bad parameter, no such model, no
            # access): no retry can change that answer.
            error = f"LLM endpoint rejected the request ({exc.status_code}): {_short(exc)}"
            self._refused(job, model, error)
            if not [m for m in candidates if not self._stopped(job, m)]:
                return self._cannot_continue(job, candidates)
            return Generation(code=None, model=model, tunables={"model": model}, error=error)
        self._refusals.pop((job, model), None)
        cost = self.price(model, reply.prompt_tokens, reply.completion_tokens)
        TOKENS.labels(model, "prompt").inc(reply.prompt_tokens)
        TOKENS.labels(model, "completion").inc(reply.completion_tokens)
        COST.labels(model).inc(cost or 0.0)
        tunables = {"model": model}
        if reply.estimated:
            tunables["usage"] = "estimated"
        if cost is None:
            tunables["cost"] = "unpriced"
        result = Generation(code=None, tunables=tunables, prompt_tokens=reply.prompt_tokens,
                            completion_tokens=reply.completion_tokens, cost_usd=cost or 0.0, model=model,
                            reply=reply.text)
        try:
            code, how = extract_code(reply.text, parent_code, truncated=reply.finish_reason == "length")
        except ReplyError as exc:
            result.error = str(exc)
            log.info("llm reply unusable", model=model, error=str(exc), reply_head=reply.text[:200])
            return result
        result.code = code
        result.tunables["reply"] = how
        return result

    def _refused(self, job: str, model: str, error: str) -> None:
        last, count = self._refusals.get((job, model), ("", 0))
        self._refusals[(job, model)] = (error, count + 1 if error == last else 1)

    def _stopped(self, job: str, model: str) -> bool:
        return self._refusals.get((job, model), ("", 0))[1] >= self.settings.openai_max_identical_refusals

    def _cannot_continue(self, job: str, models: list[str]) -> Generation:
        errors = sorted({self._refusals[(job, m)][0] for m in models if (job, m) in self._refusals})
        return Generation(
            code=None, job_cannot_continue=True,
            error=(f"stopped calling {', '.join(models)} for this job: each refused "
                   f"{self.settings.openai_max_identical_refusals} requests in a row with the same error: "
                   + "; ".join(errors))[:2000])

    async def aclose(self) -> None:
        await self.client.close()


def _bare_prompt(spec_source: str) -> promptdoc.PromptDoc:
    """Used only when a request carries no prompt (retriever bypassed): the spec and the format rule."""
    user = ("Write a Triton implementation of this PyTorch reference: a complete Python file defining "
            "class ModelNew (same __init__ and forward signatures as Model) whose forward launches "
            "@triton.jit kernels for all computation. Reply with one ```python block.\n\n"
            f"```python\n{spec_source.strip()}\n```")
    return promptdoc.PromptDoc(system="", user=user)


def _param(exc: openai.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    return str(error.get("param") or "") if isinstance(error, dict) else ""


def _short(exc: openai.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    message = body.get("message") or (error.get("message") if isinstance(error, dict) else error)
    return str(message or exc.message)[:500]
