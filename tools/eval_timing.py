"""How repeatable is the evaluator's CUDA timing, and does it agree with triton.testing.do_bench?

On a GPU: for each example spec (examples/*.py) and a correct Triton candidate for it, run
the full evaluation harness (separate reference and candidate processes, cold-L2 event
timing, baselines interleaved) ``--runs`` times, then time the same candidate and the
torch.compile baseline in this process with ``triton.testing.do_bench`` (median mode). Prints
a markdown table: per-spec median time, the CV across runs, the harness's own within-run
CV, and the relative difference to do_bench (target: within 5%).

    python tools/eval_timing.py [--runs 10] [--out eval_timing.md] [--cpu-load N]

``--cpu-load N`` keeps N processes spinning on the host during the harness runs, as on an
evaluator whose other candidates compile beside the one being timed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kevolve.platforms import get_platform
from kevolve.specfile import load_module, outline
from kevolve.v1 import common_pb2
from services.evaluator.config import EvaluatorSettings
from services.evaluator.harness import Harness
from services.evaluator.plan import EvalJob

CORRECT = REPO / "tests" / "fixtures" / "kernels" / "correct"
PAIRS = [
    ("softmax", REPO / "examples" / "softmax.py", CORRECT / "softmax_example_spec.py"),
    ("gelu_scale_add", REPO / "examples" / "gelu_scale_add.py", CORRECT / "gelu_examples_spec.py"),
    ("rmsnorm", REPO / "examples" / "rmsnorm.py", CORRECT / "rmsnorm.py"),
]


def do_bench_times(spec_path: Path, cand_path: Path) -> tuple[float, float]:
    """(candidate ms, torch.compile ms) by triton.testing.do_bench, in this process."""
    import triton.testing

    sizes = outline(spec_path.read_text()).sizes
    spec = load_module(spec_path.read_text(), "bench_spec", filename=str(spec_path))
    cand_src = cand_path.read_text()
    own = {k: v for k, v in sizes.items() if k in outline(cand_src).sizes}
    cand = load_module(cand_src, "bench_cand", own, str(cand_path))
    torch.manual_seed(1)
    ref = spec.Model(*spec.get_init_inputs()).cuda().eval()
    new = cand.ModelNew(*spec.get_init_inputs())
    new.load_state_dict({k: v for k, v in ref.state_dict().items() if k in new.state_dict()}, strict=False)
    new = new.cuda().eval()
    compiled = torch.compile(ref, dynamic=False)
    torch.manual_seed(2)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in spec.get_inputs()]
    with torch.no_grad():
        t_new = triton.testing.do_bench(lambda: new(*inputs), warmup=100, rep=500, return_mode="median")
        compiled(*inputs)
        t_cmp = triton.testing.do_bench(lambda: compiled(*inputs), warmup=100, rep=500, return_mode="median")
    return float(t_new), float(t_cmp)


def _spin() -> None:
    while True:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--specs", default=",".join(p[0] for p in PAIRS))
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown table here")
    parser.add_argument("--cpu-load", type=int, default=0, help="busy processes on the host during the runs")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("eval_timing needs a CUDA GPU (torch.cuda.is_available() is false)", file=sys.stderr)
        return 2
    platform = get_platform(REPO / "kb", "cuda")
    rows = []
    env: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="kevolve-bench-") as scratch:
        harness = Harness(
            EvaluatorSettings(platform="cuda", scratch_dir=Path(scratch), timeout_s=600, memory_mb=32768),
            REPO / "kb",
        )
        for name, spec_path, cand_path in PAIRS:
            if name not in args.specs.split(","):
                continue
            times, compile_times, inner_cvs, verdicts = [], [], [], []
            started = time.monotonic()
            load = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.cpu_load)]
            for proc in load:
                proc.start()
            for run in range(args.runs):
                out = harness.evaluate(
                    EvalJob(
                        spec_source=spec_path.read_text(),
                        candidate_source=cand_path.read_text(),
                        platform=platform,
                        seed=1000 + run % 2,
                    )
                )
                verdicts.append(common_pb2.Verdict.Name(out.result.verdict))
                if out.result.verdict not in (common_pb2.PASSED, common_pb2.SUSPICIOUS):
                    print(
                        f"{name} run {run}: {verdicts[-1]} {out.result.decided_by}: {out.result.reason}\n"
                        f"{out.evaluation.traceback[-3000:]}\n{out.evaluation.log[-3000:]}",
                        file=sys.stderr,
                    )
                    continue
                case = out.result.cases[0]
                extra = out.evaluation.case_timing(0).extra
                times.append(case.candidate_ms)
                compile_times.append(case.compile_ms)
                inner_cvs.append(case.candidate_cv)
                env = dict(out.result.environment)
                print(
                    f"{name} run {run}: {case.candidate_ms:.4f} ms (cv {case.candidate_cv:.3%}), compile "
                    f"{case.compile_ms:.4f} ms, eager {case.eager_ms:.4f} ms, fitness {case.fitness:.3f}, "
                    "host issue ms / retakes per sample: " + ", ".join(
                        f"{k.removesuffix('_host_ms')} {v:.4f} / {extra.get(k.replace('_host_ms', '_retake_rate'), 0):.2f}"
                        for k, v in extra.items() if k.endswith("_host_ms")),
                    file=sys.stderr,
                )
            for proc in load:
                proc.kill()
            if not times:
                rows.append(f"| {name} | - | - | - | - | - | - | {', '.join(sorted(set(verdicts)))} |")
                continue
            db_new, db_cmp = do_bench_times(spec_path, cand_path)
            med, med_cmp = statistics.median(times), statistics.median(compile_times)
            cv_runs = statistics.stdev(times) / statistics.fmean(times) if len(times) > 1 else 0.0
            rows.append(
                f"| {name} | {med:.4f} | {cv_runs:.2%} | {statistics.median(inner_cvs):.2%} | {db_new:.4f} | "
                f"{(med - db_new) / db_new:+.1%} | {med_cmp:.4f} vs {db_cmp:.4f} ({(med_cmp - db_cmp) / db_cmp:+.1%}) | "
                f"{len(times)}/{args.runs} ok, {time.monotonic() - started:.0f}s |"
            )
    header = [
        "| spec | harness median ms | CV across runs | median within-run CV | do_bench ms | harness vs do_bench |"
        " torch.compile: harness vs do_bench | runs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    text = "\n".join(
        [
            f"GPU: {env.get('gpu', '?')}, driver {env.get('driver_version', '?')}, torch {env.get('torch', '?')},"
            f" triton {env.get('triton', '?')}, SM clock {env.get('clocks.sm', '?')} MHz, "
            f"copy bandwidth {env.get('peak_copy_gbps', '?')} GB/s",
            "",
            *header,
            *rows,
        ]
    )
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
