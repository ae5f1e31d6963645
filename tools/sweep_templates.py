"""Sweep the offline generator's templates over their tunables on a GPU, spec by spec.

The search gets a handful of GPU verdicts per spec, so what the offline generator proposes
first decides most of the result. This measures, for each spec of the suite at its
production shape, every matching template at its defaults, at every one-knob move from
them and at a few seeded random points (``--random``), and prints which tunables won and by
how much over the defaults. It informs the templates' default order (kb/templates/*.toml):
a value goes first because it wins across the specs of its family, never for one spec.

Run on the GPU machine from the repository root (after ``source tools/install_wheels_offline.sh``):

    python3 tools/sweep_templates.py --out $OUT/sweep [--only conv1d_k3_fp16 bmm_fp16] [--jobs 12]

Phase 1 renders every point and, in ``--jobs`` processes side by side, compiles it and
checks it against the reference at the production shape (Triton's compile cache on disk is
then warm); phase 2 times the correct ones one process at a time (nothing else on the GPU)
with ``triton.testing.do_bench`` next to eager PyTorch (torch.compile from ``--baselines``).
"""
from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def points(tunables: dict[str, list[str]], extra: int, seed: int) -> list[dict[str, str]]:
    """Defaults, every one-knob move from them, then ``extra`` distinct random points."""
    defaults = {k: v[0] for k, v in tunables.items()}
    out = [defaults]
    for knob, values in tunables.items():
        out += [{**defaults, knob: v} for v in values[1:]]
    space = list(itertools.product(*tunables.values()))
    random.Random(seed).shuffle(space)
    seen = {tuple(p.values()) for p in out}
    for combo in space:
        if extra <= 0:
            break
        if combo not in seen:
            seen.add(combo)
            out.append(dict(zip(tunables, combo, strict=True)))
            extra -= 1
    return out


def render_all(spec: Path, extra: int, work: Path, only_templates: list[str] | None = None) -> list[dict[str, Any]]:
    from services.generator.backends.offline import OfflineBackend
    from services.generator.offline.ops import DoesNotFit
    from services.generator.offline.specparts import spec_parts
    from services.generator.tracer import trace

    from kevolve import specfile

    source = spec.read_text()
    traced = trace(source, specfile.check_outline(source).cpu_sizes)
    backend = OfflineBackend(ROOT / "kb" / "templates")
    templates, _, why = backend.matching(traced)
    if only_templates:
        templates = [t for t in templates if t.name in only_templates]
        why = why or f"none of {only_templates} matches"
    parts = spec_parts(source)
    rendered = []
    for t in templates:
        for i, tun in enumerate(points(t.tunables, extra, seed=len(spec.stem))):
            path = work / f"{spec.stem}__{t.name}__{i}.py"
            try:
                path.write_text(backend.render(t, tun, traced, source, parts))
                rendered.append({"spec": spec.stem, "template": t.name, "tunables": tun, "file": str(path),
                                 "default": i == 0})
            except DoesNotFit:
                continue  # tiles over every GPU's shared memory: the generator never drafts them
            except Exception as exc:  # noqa: BLE001 - a point a template cannot serve is a result
                rendered.append({"spec": spec.stem, "template": t.name, "tunables": tun, "default": i == 0,
                                 "error": f"render: {type(exc).__name__}: {exc}"[:300]})
    if not templates:
        rendered.append({"spec": spec.stem, "template": "-", "tunables": {}, "error": f"no template: {why}"})
    return rendered


def _setup(spec: Path, device: str = "cuda") -> tuple[Any, Any, list[Any], list[Any]]:
    import torch

    from kevolve import specfile
    from services.evaluator.sandboxed import inputs

    source = spec.read_text()
    sizes = specfile.check_outline(source).cpu_sizes if device == "cpu" else None
    module = specfile.load_module(source, f"_sweep_{spec.stem}", sizes=sizes, filename=str(spec))
    torch.manual_seed(1)
    model = module.Model(*module.get_init_inputs()).to(device).eval()
    values = inputs.make_inputs(module, 12345, "affine", device)
    with torch.no_grad():
        out = model(*values)
    expected = list(out) if isinstance(out, (tuple, list)) else [out]
    return module, model, values, expected


def _candidate(module: Any, model: Any, path: str, device: str = "cuda") -> Any:
    import torch

    from kevolve import specfile

    cand = specfile.load_module(Path(path).read_text(), "_sweep_cand_" + Path(path).stem, filename=path)
    torch.manual_seed(1)
    new = cand.ModelNew(*module.get_init_inputs())
    mine = new.state_dict()
    new.load_state_dict({k: v for k, v in model.state_dict().items() if k in mine and mine[k].shape == v.shape},
                        strict=False)
    return new.to(device).eval()


def check_spec(spec_file: str, rows: list[dict[str, Any]], device: str = "cuda") -> list[dict[str, Any]]:
    """Phase 1 (one process per spec): compile and check every rendered point.

    ``device="cpu"`` (with TRITON_INTERPRET=1, at the spec's sizes) only checks this script.
    """
    import torch

    from services.evaluator.compare import Agreement, compare

    spec = Path(spec_file)
    try:
        module, model, values, expected = _setup(spec, device)
    except Exception as exc:  # noqa: BLE001
        return [{**r, "error": f"reference: {type(exc).__name__}: {exc}"[:300]} for r in rows]
    atol, rtol = float(getattr(module, "atol", 0.0)), float(getattr(module, "rtol", 0.0))
    for r in rows:
        if "error" in r:
            continue
        try:
            started = time.monotonic()
            new = _candidate(module, model, r["file"], device)
            with torch.no_grad():
                out = new(*values)
            if device == "cuda":
                torch.cuda.synchronize()
            r["first_call_s"] = round(time.monotonic() - started, 2)
            got = list(out) if isinstance(out, (tuple, list)) else [out]
            verdict = compare(expected, got, atol, rtol)
            r["correct"] = isinstance(verdict, Agreement)
            if not r["correct"]:
                r["error"] = f"incorrect: {getattr(verdict, 'reason', verdict)}"[:300]
        except Exception as exc:  # noqa: BLE001 - compile errors, OOM, launch failures: all results
            r["error"] = f"{type(exc).__name__}: {exc}"[:300]
        if device == "cuda":
            torch.cuda.empty_cache()
    return rows


def time_spec(spec_file: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Phase 2 (alone on the GPU): eager PyTorch and every correct point.

    torch.compile is not rebuilt here (10-20 s a spec): its time comes from the isolated
    baselines file (bench/suite/measure_baselines.py), passed with ``--baselines``.
    """
    import torch
    from triton.testing import do_bench

    from kevolve.exec.gputiming import gpu_time_ms

    spec = Path(spec_file)
    module, model, values, _ = _setup(spec)
    result: dict[str, Any] = {"spec": spec.stem, "rows": rows}
    with torch.no_grad():
        result["eager_ms"] = do_bench(lambda: model(*values), return_mode="median")
        for r in rows:
            if not r.get("correct"):
                continue
            try:
                new = _candidate(module, model, r["file"])
                new(*values)
                r["ms"] = do_bench(lambda new=new: new(*values), return_mode="median")
                # as the evaluator times: GPU alone (do_bench also charges host time past its flush)
                r["gpu_ms"], r["host_ms"] = gpu_time_ms(lambda new=new: new(*values), reps=100)
            except Exception as exc:  # noqa: BLE001
                r["error"] = f"timing: {type(exc).__name__}: {exc}"[:300]
    return result


def _fmt(tun: dict[str, str], base: dict[str, str]) -> str:
    moved = {k: v for k, v in tun.items() if base.get(k) != v}
    return ", ".join(f"{k}={v}" for k, v in moved.items()) or "defaults"


def _ms(row: dict[str, Any]) -> float:
    """A point's time: GPU alone where measured (sweeps since 2026-11-22), else do_bench's."""
    return float(row.get("gpu_ms") or row["ms"])


def render_md(results: list[dict[str, Any]]) -> str:
    lines = ["# Template sweep", "",
             "Per spec at its production shape: torch.compile, each matching template's defaults, and "
             "its best measured point (tunables shown as changes from the defaults). "
             "Medians in ms: GPU time as the evaluator measures it where recorded, else do_bench.", "",
             "| spec | eager | torch.compile | template | defaults | best | best tunables | best vs compile "
             "| points ok / tried |", "|---|---|---|---|---|---|---|---|---|"]
    for res in results:
        compile_ms = res.get("compile_ms")
        by_t: dict[str, list[dict[str, Any]]] = {}
        for r in res["rows"]:
            by_t.setdefault(r["template"], []).append(r)
        for name, rows in by_t.items():
            timed = [r for r in rows if "ms" in r]
            dflt = next((r for r in rows if r.get("default")), rows[0])
            best = min(timed, key=_ms) if timed else None
            d = f"{_ms(dflt):.4f}" if "ms" in dflt else (dflt.get("error") or "?")[:60]
            b = f"{_ms(best):.4f}" if best else "–"
            vs = f"{compile_ms / _ms(best):.2f}x" if best and compile_ms else "–"
            bt = _fmt(best["tunables"], dflt["tunables"]) if best else "–"
            c = f"{compile_ms:.4f}" if compile_ms else "–"
            lines.append(f"| `{res['spec']}` | {res.get('eager_ms', 0):.4f} | {c} | {name} | {d} | {b} | {bt} "
                         f"| {vs} | {len(timed)} / {len(rows)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", type=Path, default=ROOT / "bench" / "suite")
    # both "--only A B" and "--only A --only B" name two specs
    parser.add_argument("--only", nargs="+", action="extend", default=None, help="specs to sweep (file stems)")
    parser.add_argument("--template", nargs="+", action="extend", default=None,
                        help="sweep only these templates (e.g. the ones not yet measured)")
    parser.add_argument("--random", type=int, default=8, help="random points per template beyond one-knob moves")
    parser.add_argument("--jobs", type=int, default=12)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--baselines", type=Path, default=None, help="measure_baselines.py JSON (torch.compile times)")
    parser.add_argument("--time-limit-s", type=float, default=1e9, help="stop timing new specs after this")
    parser.add_argument("--render", type=Path, default=None, help="re-render a saved sweep.json and exit")
    args = parser.parse_args()
    if args.render is not None:
        args.render.with_suffix(".md").write_text(render_md(json.loads(args.render.read_text())))
        return
    from kevolve import specfile

    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "kernels"
    work.mkdir(exist_ok=True)
    specs = [p for p in sorted(args.suite.glob("*.py"))
             if set(specfile.REQUIRED) <= specfile.outline(p.read_text()).defines
             and (not args.only or p.stem in args.only)]
    if args.only:  # timed in the order given: the most wanted first, before any time limit
        specs.sort(key=lambda p: args.only.index(p.stem))
    rendered = {p: render_all(p, args.random, work, args.template) for p in specs}
    print(f"rendered {sum(map(len, rendered.values()))} points for {len(specs)} specs", flush=True)
    spawn = multiprocessing.get_context("spawn")  # CUDA cannot be used in forked children
    with ProcessPoolExecutor(args.jobs, mp_context=spawn) as pool:
        checked = dict(zip(specs, pool.map(check_spec, map(str, specs), rendered.values()), strict=True))
    print("checked", flush=True)
    baselines: dict[str, float] = {}
    if args.baselines is not None:
        from kevolve.client.benchreport import isolated_production_ms

        baselines = isolated_production_ms(args.baselines)
    results = []
    deadline = time.monotonic() + args.time_limit_s
    for spec in specs:  # timed here, one spec after another: nothing else runs on the GPU
        if time.monotonic() > deadline:
            print(f"time limit reached: {spec.stem} and later specs not timed", flush=True)
            break
        try:
            res = time_spec(str(spec), checked[spec])
        except Exception as exc:  # noqa: BLE001 - an OOM or a broken reference: record, go on
            res = {"spec": spec.stem, "rows": checked[spec], "error": f"{type(exc).__name__}: {exc}"[:300]}
        if spec.stem in baselines:
            res["compile_ms"] = baselines[spec.stem]
        results.append(res)
        (args.out / "sweep.json").write_text(json.dumps(results, indent=1))
        (args.out / "sweep.md").write_text(render_md(results))
        print("\n".join(render_md(results[-1:]).splitlines()[6:]), flush=True)


if __name__ == "__main__":
    main()
