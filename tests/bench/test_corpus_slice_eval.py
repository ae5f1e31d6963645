"""The rest of the corpus's CI slice (bench/corpus/ci_slice.txt, one spec per class of each
level; test_corpus_system.py takes a handful of it through the whole system): each file as
written (GPU sizes, no cpu_shapes) gets the screening sizes a submit would derive, a kernel
program from the offline generator, and `kevolve eval` at those sizes must pass it.

Two specs at a time, as the cpu pool of a 2-core machine would run them.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from test_corpus_system import HANDFUL

from kevolve.config import REPO_ROOT
from kevolve.v1 import work_pb2
from services.controller.api.specprobe import probe

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

CORPUS = REPO_ROOT / "bench" / "corpus"
SLICE = [line.strip() for line in (CORPUS / "ci_slice.txt").read_text().splitlines()
         if line.strip() and not line.startswith("#")]
REST = [entry for entry in SLICE if entry not in HANDFUL]


@pytest.fixture(scope="module")
async def offline_backend(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    from services.generator.backends.offline import OfflineBackend

    b = OfflineBackend(REPO_ROOT / "kb" / "templates", trace_timeout_s=120,
                       scratch_dir=tmp_path_factory.mktemp("gen"))
    yield b
    await b.aclose()


async def _one(backend: Any, entry: str, work: Path) -> tuple[str, int, str]:
    spec = CORPUS / entry
    source = spec.read_text()
    sizes = (await asyncio.to_thread(probe, source, {}, 60)).screening_sizes
    request = work_pb2.GenerateRequest(expand=work_pb2.ExpandRequest(cpu_sizes=sizes, tenant="ci"))
    gen = await backend.generate(request, "", source, None)
    if not gen.code:
        return entry, -1, f"no kernel program: {gen.error}"
    candidate = work / f"{spec.stem}_candidate.py"
    candidate.write_text(gen.code)
    args = [sys.executable, "-m", "kevolve.client.main", "eval", str(spec), str(candidate), "--platform", "cpu",
            "--json", *(f"--cpu-size={k}={v}" for k, v in sizes.items())]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    run = await asyncio.to_thread(subprocess.run, args, capture_output=True, text=True, env=env, timeout=600)
    if run.returncode != 0:
        try:
            result = json.loads(run.stdout)["result"]
            why = f"{result.get('verdict')} ({result.get('decided_by')}): {result.get('reason', '')[:300]}"
        except (ValueError, KeyError):
            why = (run.stderr or run.stdout)[-600:]
        return entry, run.returncode, why
    return entry, 0, json.dumps(sizes)


async def test_the_rest_of_the_slice_passes_kevolve_eval_at_derived_screening_sizes(
        offline_backend: Any, tmp_path: Path) -> None:
    assert len(REST) >= 20
    gate = asyncio.Semaphore(2)

    async def limited(entry: str) -> tuple[str, int, str]:
        async with gate:
            return await _one(offline_backend, entry, tmp_path)

    results = await asyncio.gather(*(limited(entry) for entry in REST))
    failed = [(entry, why) for entry, code, why in results if code != 0]
    assert not failed, failed
