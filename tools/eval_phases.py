"""Where one GPU evaluation's wall time goes, phase by phase, for suite specs.

For each spec named, the offline generator's first candidate is evaluated on the cuda
platform twice with one harness: the first run pays the reference run and the cold
compile caches, the second shows the steady state a search sees. Prints a markdown table
(and writes it to --out). Run on the GPU machine after ``source tools/install_wheels_offline.sh``:

    python3 tools/eval_phases.py softmax_fp16 jagged_sum --out $OUT/eval_phases.md
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kevolve.config import REPO_ROOT  # noqa: E402
from kevolve.platforms import get_platform  # noqa: E402
from kevolve.v1 import common_pb2, work_pb2  # noqa: E402
from services.evaluator.config import EvaluatorSettings  # noqa: E402
from services.evaluator.harness import Harness  # noqa: E402
from services.evaluator.plan import EvalJob  # noqa: E402
from services.generator.backends.offline import OfflineBackend  # noqa: E402


async def first_draft(source: str) -> str:
    backend = OfflineBackend(REPO_ROOT / "kb" / "templates", trace_timeout_s=120)
    try:
        request = work_pb2.GenerateRequest(diagnosis=work_pb2.Diagnosis(category="first_draft"))
        request.expand.seed = 1
        gen = await backend.generate(request, "", source, None)
    finally:
        await backend.aclose()
    if not gen.code:
        raise RuntimeError(f"the offline generator made no code: {gen.error}")
    return str(gen.code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    platform = get_platform(REPO_ROOT / "kb", "cuda")
    keys: list[str] = []
    results: list[tuple[str, str, dict[str, float], dict[str, float], str]] = []
    with tempfile.TemporaryDirectory(prefix="kevolve-phases-") as scratch:
        harness = Harness(EvaluatorSettings(platform="cuda", scratch_dir=Path(scratch), warm_pool=False,
                                            timeout_s=900, memory_mb=65536), REPO_ROOT / "kb")
        for name in args.specs:
            source = (REPO_ROOT / "bench" / "suite" / f"{name}.py").read_text()
            code = asyncio.run(first_draft(source))
            for run in ("cold", "warm"):
                out = harness.evaluate(EvalJob(spec_source=source, candidate_source=code, platform=platform))
                verdict = common_pb2.Verdict.Name(out.result.verdict)
                worker = dict(out.evaluation.phases_s)
                child = dict(out.evaluation.candidate_phases_s)
                worker["total"] = round(out.result.duration_s, 2)
                for k in [*worker, *child]:
                    if k not in keys:
                        keys.append(k)
                results.append((name, run, worker, child, f"{verdict} {out.result.fitness:.3g}x"))
                print(name, run, verdict, worker, child, flush=True)
    head = "| spec | run | verdict | " + " | ".join(keys) + " |"
    rows = [head, "|" + "---|" * (3 + len(keys))]
    for name, run, worker, child, verdict in results:
        both = {**child, **worker}
        rows.append(f"| `{name}` | {run} | {verdict} | "
                    + " | ".join(f"{both[k]:.2f}" if k in both else "–" for k in keys) + " |")
    table = "\n".join(rows) + "\n"
    print(table)
    if args.out:
        args.out.write_text(table)


if __name__ == "__main__":
    main()
