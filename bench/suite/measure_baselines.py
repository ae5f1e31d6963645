"""Measure the suite's baselines on a GPU: eager PyTorch and torch.compile for every spec and shape.

Run on the GPU machine from the repository root:

    python bench/suite/measure_baselines.py --out bench/results [--only softmax_fp16 mapid]
    python bench/suite/measure_baselines.py --out bench/results --render bench/results/<file>.json

Writes ``suite_baselines_<gpu>.json`` and ``.md``: per spec and case, eager and
torch.compile median times (triton.testing.do_bench), the bandwidth floor (minimal bytes
/ measured copy bandwidth) and the fraction of copy bandwidth torch.compile reaches. This
checks that every spec runs at its production sizes on CUDA, and gives the headroom a
kernel can win. Results are rewritten after each spec, so a run cut short keeps what it
measured. Needs only torch, triton and the stdlib parts of kevolve.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kevolve import specfile  # noqa: E402


def _to_cuda(obj: object) -> object:
    import torch

    return obj.cuda() if isinstance(obj, torch.Tensor) else obj


def _diff(a: object, b: object) -> float:
    import torch

    assert isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
    if a.shape != b.shape:
        return float("inf")
    if not a.is_floating_point():
        return float((a != b).sum().item())
    finite = torch.isfinite(a)
    return float((a.float() - b.float())[finite].abs().max().item()) if finite.any() else 0.0


def measure_case(path: Path, name: str, sizes: dict[str, int] | None, copy_bw_gbs: float) -> dict[str, object]:
    import torch
    from triton.testing import do_bench

    from kevolve.exec.gputiming import gpu_time_ms

    source = path.read_text()
    module = specfile.load_module(source, f"_baseline_{path.stem}_{name}", sizes=sizes, filename=str(path))
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs()).cuda().eval()
    inputs = [_to_cuda(t) for t in module.get_inputs()]
    row: dict[str, object] = {"spec": path.stem, "case": name, "sizes": sizes or specfile.outline(source).sizes,
                              "bytes_moved": module.bytes_moved(), "flops": module.flops()}
    row["floor_us"] = module.bytes_moved() / (copy_bw_gbs * 1e9) * 1e6
    with torch.no_grad():
        expected = model(*inputs)
        row["eager_ms"] = do_bench(lambda: model(*inputs), return_mode="median")
        try:
            compiled = torch.compile(model, dynamic=False)  # as the evaluator's baseline: this shape
            started = time.monotonic()
            got = compiled(*inputs)
            row["compile_s"] = time.monotonic() - started
            row["compile_vs_eager_max_diff"] = _diff(expected, got)
            row["compile_ms"] = do_bench(lambda: compiled(*inputs), return_mode="median")
            row["compile_bw_frac"] = module.bytes_moved() / (float(row["compile_ms"]) * 1e-3) / (copy_bw_gbs * 1e9)
        except Exception as exc:  # noqa: BLE001 - a compile failure is a result to record, not a crash
            row["compile_error"] = f"{type(exc).__name__}: {exc}"[:500]
        # GPU time as the evaluator measures it (do_bench above also charges host issue time
        # beyond its L2 flush), and the host time of a call beside it.
        try:
            row["eager_gpu_ms"], row["eager_host_ms"] = gpu_time_ms(lambda: model(*inputs))
            if "compile_ms" in row:
                row["compile_gpu_ms"], row["compile_host_ms"] = gpu_time_ms(lambda: compiled(*inputs))
        except Exception as exc:  # noqa: BLE001
            row["gpu_time_error"] = f"{type(exc).__name__}: {exc}"[:500]
    del model, inputs, expected
    torch.cuda.empty_cache()
    return row


def render(rows: list[dict[str, object]], gpu: str, copy_bw_gbs: float) -> str:
    lines = [f"# Suite baselines on {gpu}", "",
             f"Measured by bench/suite/measure_baselines.py (triton.testing.do_bench medians; the last column, "
             "where present, times the GPU alone as the evaluator does and gives the host issue time of a "
             "call beside it, see kevolve.exec.gputiming.gpu_time_ms). Copy bandwidth "
             f"measured on the same GPU: {copy_bw_gbs:.0f} GB/s (read+write). floor = minimal bytes / copy "
             "bandwidth; compile %BW = minimal bytes / torch.compile time / copy bandwidth.", "",
             "For compute-bound specs (matmuls, conv) the bandwidth floor is not the limit: read the "
             "TFLOP/s column against the GPU's peak instead.", "",
             "| spec | case | eager ms | torch.compile ms | floor us | compile %BW | headroom (compile / floor) "
             "| compile TFLOP/s | torch.compile GPU ms / host ms |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| `{r['spec']}` | {r['case']} | error: {str(r['error'])[:120]} | | | | | | |")
            continue
        compile_ms = r.get("compile_ms")
        c = f"{compile_ms:.4f}" if isinstance(compile_ms, float) else f"failed: {str(r.get('compile_error'))[:80]}"
        frac = f"{100 * float(r['compile_bw_frac']):.1f}%" if "compile_bw_frac" in r else "–"
        head = (f"{float(compile_ms) * 1e3 / float(r['floor_us']):.2f}x" if isinstance(compile_ms, float) else "–")
        tflops = f"{float(r['flops']) / (float(compile_ms) * 1e-3) / 1e12:.1f}" if isinstance(compile_ms, float) else "–"
        gpu = (f"{float(r['compile_gpu_ms']):.4f} / {float(r['compile_host_ms']):.3f}" if "compile_gpu_ms" in r
               else "–")
        lines.append(f"| `{r['spec']}` | {r['case']} | {float(r['eager_ms']):.4f} | {c} | {float(r['floor_us']):.1f} "
                     f"| {frac} | {head} | {tflops} | {gpu} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", nargs="+", action="extend", default=None, help="specs (file stems)")
    parser.add_argument("--tag", default="", help="suffix of the output file names")
    parser.add_argument("--render", type=Path, default=None, help="re-render the .md of a saved JSON and exit")
    args = parser.parse_args()
    if args.render is not None:
        saved = json.loads(args.render.read_text())
        args.render.with_suffix(".md").write_text(render(saved["rows"], saved["gpu"], saved["copy_bw_gbs"]))
        return
    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU: baselines are GPU measurements")
    gpu = torch.cuda.get_device_name()
    from kevolve.exec.gputiming import copy_bandwidth_gbs

    copy_bw = copy_bandwidth_gbs()
    stem = "suite_baselines_" + re.sub(r"[^a-z0-9]+", "_", gpu.lower()).strip("_") + (f"_{args.tag}" if args.tag else "")
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, object]] = []
    for path in sorted(args.suite.glob("*.py")):
        outline = specfile.outline(path.read_text())
        if not set(specfile.REQUIRED) <= outline.defines or (args.only and path.stem not in args.only):
            continue
        cases: list[tuple[str, dict[str, int] | None]] = [("default", None)]
        cases += [(str(c["name"]), dict(c["sizes"])) for c in outline.test_cases]  # type: ignore[arg-type]
        for name, sizes in cases:
            try:
                rows.append(measure_case(path, name, sizes, copy_bw))
            except Exception as exc:  # noqa: BLE001 - record and go on to the next spec
                rows.append({"spec": path.stem, "case": name, "error": f"{type(exc).__name__}: {exc}"[:500],
                             "traceback": traceback.format_exc()[-2000:]})
            print(json.dumps(rows[-1], default=str), flush=True)
            (args.out / f"{stem}.json").write_text(json.dumps({"gpu": gpu, "copy_bw_gbs": copy_bw,
                                                               "torch": torch.__version__, "rows": rows}, indent=1))
            (args.out / f"{stem}.md").write_text(render(rows, gpu, copy_bw))


if __name__ == "__main__":
    main()
