"""The openai backend against a real HTTP server process speaking the chat-completions protocol."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from kevolve import promptdoc
from kevolve.config import CommonSettings
from kevolve.v1 import common_pb2, work_pb2
from services.generator.backends import build_backend
from services.generator.backends.openai_backend import OpenAIBackend
from services.generator.config import GeneratorSettings

SERVER = Path(__file__).with_name("fake_openai_server.py")

PARENT = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        k[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
'''
PROMPT = promptdoc.render(promptdoc.PromptDoc(system="SYSTEM RULES", user="USER TASK", meta={"retrieved_docs": []}))

Start = Callable[[list[dict[str, Any]]], tuple[str, Path]]


@pytest.fixture
def fake_openai(tmp_path: Path) -> Iterator[Start]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(script: list[dict[str, Any]]) -> tuple[str, Path]:
        n = len(procs)
        script_file, log, port_file = (tmp_path / f"script{n}.json", tmp_path / f"requests{n}.jsonl",
                                       tmp_path / f"port{n}")
        script_file.write_text(json.dumps(script))
        procs.append(subprocess.Popen([sys.executable, str(SERVER), str(script_file), str(log), str(port_file)]))
        deadline = time.monotonic() + 10
        while not port_file.exists():
            assert procs[-1].poll() is None, "fake server died"
            assert time.monotonic() < deadline, "fake server did not start"
            time.sleep(0.02)
        return f"http://127.0.0.1:{port_file.read_text()}/v1", log

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=10)


def _backend(base_url: str, **overrides: Any) -> OpenAIBackend:
    fields: dict[str, Any] = dict(backend="openai", openai_base_url=base_url, openai_models=["m1"],
                                  openai_prices={"m1": (1.0, 2.0)}, openai_retry_initial_s=0.05,
                                  openai_retry_max_s=0.2, openai_timeout_s=5.0, openai_max_attempts=3)
    fields.update(overrides)
    return OpenAIBackend(GeneratorSettings(**fields))


def _request(model: str = "") -> work_pb2.GenerateRequest:
    return work_pb2.GenerateRequest(expand=work_pb2.ExpandRequest(job_id="j", expansion_id="e1", model=model))


def _requests(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _fenced(code: str, lang: str = "python") -> str:
    return f"Here is the kernel.\n\n```{lang}\n{code}```\nIt launches one program per block."


async def test_fenced_reply_gives_code_and_accounts_usage(fake_openai: Start) -> None:
    url, log = fake_openai([{"content": _fenced(PARENT), "usage": {"prompt_tokens": 1200, "completion_tokens": 300}}])
    backend = _backend(url, openai_api_key="sk-test")
    gen = await backend.generate(_request(), PROMPT, "spec", None)
    await backend.aclose()
    assert gen.code == PARENT and gen.error == ""
    assert (gen.prompt_tokens, gen.completion_tokens, gen.model) == (1200, 300, "m1")
    assert gen.cost_usd == pytest.approx((1200 * 1.0 + 300 * 2.0) / 1e6)
    assert gen.tunables == {"model": "m1", "reply": "fenced"}
    usage = gen.usage()
    assert usage.prompt_tokens == 1200 and usage.cost_usd == pytest.approx(0.0018)
    sent = _requests(log)[0]
    assert sent["body"]["model"] == "m1"
    assert sent["body"]["messages"] == [{"role": "system", "content": "SYSTEM RULES"},
                                        {"role": "user", "content": "USER TASK"}]
    assert sent["authorization"] == "Bearer sk-test"


async def test_system_part_can_travel_in_the_user_message(fake_openai: Start) -> None:
    url, log = fake_openai([{"content": _fenced(PARENT)}])
    await _backend(url, openai_system_role="user").generate(_request(), PROMPT, "spec", None)
    assert _requests(log)[0]["body"]["messages"] == [{"role": "user", "content": "SYSTEM RULES\n\nUSER TASK"}]


async def test_block_defining_modelnew_is_chosen_among_several(fake_openai: Start) -> None:
    reply = "Run it with:\n```bash\npython run.py\n```\nHelper first:\n```python\nimport math\n```\n" + _fenced(PARENT)
    url, _ = fake_openai([{"content": reply}])
    gen = await _backend(url).generate(_request(), PROMPT, "spec", None)
    assert gen.code == PARENT


async def test_whole_file_reply(fake_openai: Start) -> None:
    url, _ = fake_openai([{"content": "Sure, here is the whole file:\n\n" + PARENT}])
    gen = await _backend(url).generate(_request(), PROMPT, "spec", None)
    assert gen.code == PARENT and gen.tunables["reply"] == "whole"


@pytest.mark.parametrize(("reply", "finish", "error"), [
    ("I cannot help with writing kernels today.", "stop", "reply held no code"),
    ("```python\nimport torch\nprint('no model here')\n```", "stop", "none defines class ModelNew"),
    ("```python\nimport torch\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return (x +", "length",
     "cut off inside its code block"),
    ("```python\nclass ModelNew(:\n    pass\n```", "stop", "does not parse"),
    ("", "stop", "reply is empty"),
])
async def test_malformed_replies_are_no_code_with_a_reason(fake_openai: Start, reply: str, finish: str,
                                                           error: str) -> None:
    url, _ = fake_openai([{"content": reply, "finish_reason": finish,
                           "usage": {"prompt_tokens": 10, "completion_tokens": 20}}])
    gen = await _backend(url).generate(_request(), PROMPT, "spec", None)
    assert gen.code is None
    assert error in gen.error
    assert gen.completion_tokens == 20 and gen.cost_usd > 0  # the call was paid for all the same


async def test_rate_limit_then_success(fake_openai: Start) -> None:
    url, log = fake_openai([{"status": 429}, {"status": 503}, {"content": _fenced(PARENT)}])
    gen = await _backend(url).generate(_request(), PROMPT, "spec", None)
    assert gen.code == PARENT
    assert len(_requests(log)) == 3


async def test_timeout_then_success(fake_openai: Start) -> None:
    url, log = fake_openai([{"delay_s": 3, "content": _fenced(PARENT)}, {"content": _fenced(PARENT)}])
    started = time.monotonic()
    gen = await _backend(url, openai_timeout_s=0.5).generate(_request(), PROMPT, "spec", None)
    assert gen.code == PARENT
    assert len(_requests(log)) == 2
    assert time.monotonic() - started < 3  # gave up on the slow reply instead of waiting it out


async def test_persistent_server_errors_raise_for_redelivery(fake_openai: Start) -> None:
    url, log = fake_openai([{"status": 500}] * 3)
    with pytest.raises(openai.InternalServerError):
        await _backend(url, openai_max_attempts=3).generate(_request(), PROMPT, "spec", None)
    assert len(_requests(log)) == 3


async def test_rejected_request_is_no_code_not_retried(fake_openai: Start) -> None:
    url, log = fake_openai([{"status": 400, "message": "context length exceeded"}])
    gen = await _backend(url).generate(_request(), PROMPT, "spec", None)
    assert gen.code is None and "rejected the request (400): context length exceeded" in gen.error
    assert len(_requests(log)) == 1


async def test_search_replace_edit_is_applied_to_the_parent(fake_openai: Start) -> None:
    edit = ("Use a bigger block.\n<<<<<<< SEARCH\n        k[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), "
            "BLOCK=1024)\n=======\n        k[(triton.cdiv(x.numel(), 4096),)](x, y, x.numel(), BLOCK=4096)\n"
            ">>>>>>> REPLACE\n")
    url, _ = fake_openai([{"content": edit}])
    gen = await _backend(url).generate(_request(), PROMPT, "spec", PARENT)
    assert gen.code == PARENT.replace("1024", "4096")
    assert gen.tunables["reply"] == "edit"


async def test_search_block_that_does_not_match_is_a_clear_error(fake_openai: Start) -> None:
    edit = "<<<<<<< SEARCH\n    return x + 1\n=======\n    return x + 2\n>>>>>>> REPLACE\n"
    url, _ = fake_openai([{"content": edit}])
    gen = await _backend(url).generate(_request(), PROMPT, "spec", PARENT)
    assert gen.code is None
    assert gen.error == "SEARCH block 1 does not match the current kernel (first line: 'return x + 1')"


async def test_missing_usage_is_estimated_and_unpriced_models_say_so(fake_openai: Start) -> None:
    url, log = fake_openai([{"content": _fenced(PARENT), "usage": None}])
    gen = await _backend(url, openai_models=["m1", "m2"]).generate(_request(model="m-other"), PROMPT, "spec", None)
    assert gen.code == PARENT
    assert gen.model == "m-other" and _requests(log)[0]["body"]["model"] == "m-other"
    assert gen.prompt_tokens == (len("SYSTEM RULES") + len("USER TASK") + 3) // 4
    assert gen.completion_tokens > 0 and gen.cost_usd == 0.0
    assert gen.tunables["usage"] == "estimated" and gen.tunables["cost"] == "unpriced"


async def test_factory_builds_it_and_the_bandit_picks_from_history(fake_openai: Start) -> None:
    url, log = fake_openai([{"content": _fenced(PARENT)}])
    settings = GeneratorSettings(backend="auto", openai_base_url=url, openai_models=["good", "bad"])
    backend = build_backend(settings, CommonSettings())
    assert isinstance(backend, OpenAIBackend)
    request = _request()
    for i in range(4):  # "good" made fast kernels, "bad" only failures
        request.expand.siblings.add(node_id=f"g{i}", verdict=common_pb2.PASSED, fitness=1.5, tunables={"model": "good"})
        request.expand.siblings.add(node_id=f"b{i}", verdict=common_pb2.INCORRECT, tunables={"model": "bad"})
    gen = await backend.generate(request, PROMPT, "spec", None)
    assert gen.model == "good" and _requests(log)[0]["body"]["model"] == "good"
    await backend.aclose()


async def test_per_model_settings_reach_the_request_body(fake_openai: Start) -> None:
    """A reasoning model takes max_completion_tokens and no temperature; another keeps the
    defaults. What each request carried is what the settings say."""
    url, log = fake_openai([{"content": _fenced(PARENT)}, {"content": _fenced(PARENT)}])
    backend = _backend(url, openai_models=["r1", "m1"], openai_max_tokens=4096, openai_temperature=0.3,
                       openai_model_settings={"r1": {"max_completion_tokens": 32000, "temperature": None,
                                                     "reasoning_effort": "high"}})
    await backend.generate(_request("r1"), PROMPT, "spec", None)
    await backend.generate(_request("m1"), PROMPT, "spec", None)
    await backend.aclose()
    reasoning, plain = (r["body"] for r in _requests(log))
    assert reasoning["max_completion_tokens"] == 32000 and reasoning["reasoning_effort"] == "high"
    assert "max_tokens" not in reasoning and "temperature" not in reasoning
    assert plain["max_tokens"] == 4096 and plain["temperature"] == 0.3


async def test_a_refused_parameter_is_corrected_and_remembered(fake_openai: Start) -> None:
    """The endpoint answers 400 naming max_tokens (use max_completion_tokens), then one naming
    temperature: each is corrected and the request sent again; later requests carry the fix."""
    url, log = fake_openai([
        {"status": 400, "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                   "Use 'max_completion_tokens' instead."},
        {"status": 400, "message": "Unsupported value: 'temperature' does not support 0.7 with this model."},
        {"content": _fenced(PARENT)},
        {"content": _fenced(PARENT)}])
    backend = _backend(url)
    first = await backend.generate(_request(), PROMPT, "spec", None)
    second = await backend.generate(_request(), PROMPT, "spec", None)
    await backend.aclose()
    assert first.code == PARENT and second.code == PARENT
    bodies = [r["body"] for r in _requests(log)]
    assert "max_tokens" in bodies[0] and "max_completion_tokens" in bodies[1] and "temperature" in bodies[1]
    assert len(bodies) == 4 and all("max_tokens" not in b and "temperature" not in b for b in bodies[2:])


async def test_a_job_stops_calling_a_model_that_refuses_the_same_way_and_says_why(fake_openai: Start) -> None:
    """Three identical client errors from the only model a job may use: the third request's
    answer says the job cannot continue (the controller ends it); no fourth call goes out.
    Another job still calls the model."""
    refusal = {"status": 404, "message": "The model 'm1' does not exist"}
    url, log = fake_openai([refusal, refusal, refusal, {"content": _fenced(PARENT)}])
    backend = _backend(url, openai_max_identical_refusals=3)
    answers = [await backend.generate(_request(), PROMPT, "spec", None) for _ in range(4)]
    assert [a.job_cannot_continue for a in answers] == [False, False, True, True]
    assert "stopped calling m1 for this job" in answers[3].error and "does not exist" in answers[3].error
    assert len(_requests(log)) == 3
    other = work_pb2.GenerateRequest(expand=work_pb2.ExpandRequest(job_id="other", expansion_id="e9"))
    assert (await backend.generate(other, PROMPT, "spec", None)).code == PARENT
    await backend.aclose()


async def test_the_raw_reply_is_kept(fake_openai: Start) -> None:
    url, _ = fake_openai([{"content": "no code here, sorry"}])
    gen = await _backend(url).generate(_request(), PROMPT, "spec", None)
    assert gen.code is None and gen.reply == "no code here, sorry"
