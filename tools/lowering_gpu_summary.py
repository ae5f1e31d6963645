"""Summarize the rows of tools/lowering_gpu_check.py: correctness, failures, geomean speed.

    python tools/lowering_gpu_summary.py results.jsonl [--slowest N]
"""

from __future__ import annotations

import argparse
import collections
import json
import math
from pathlib import Path
from typing import Any


def _geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def summarize(rows: list[dict[str, Any]], slowest: int) -> list[str]:
    out = [f"status: {dict(collections.Counter(r['status'] for r in rows))}"]
    ran = [r for r in rows if r["status"] == "ok"]
    correct = [r for r in ran if r.get("correct")]
    out.append(f"correct: {len(correct)} of {len(ran)} that ran, of {len(rows)}")
    out += [f"  wrong: {r['spec']} max abs error {r.get('max_abs_error')}" for r in ran if not r.get("correct")]
    out += [f"  {r['status']}: {r['spec']}: {r.get('error', '')[:300]}" for r in rows if r["status"] != "ok"]
    timed = [r for r in correct if "compile_ms" in r]
    out.append(f"geomean speed of the correct: {_geomean([r['eager_ms'] / r['kernel_ms'] for r in correct]):.3f}x "
               f"eager, {_geomean([r['compile_ms'] / r['kernel_ms'] for r in timed]):.3f}x torch.compile "
               f"({len(timed)} specs; faster than torch.compile: {sum(r['compile_ms'] > r['kernel_ms'] for r in timed)})")
    out.append(f"slowest against torch.compile (speedup, spec, kernel ms, torch.compile ms, kernels):")
    for r in sorted(timed, key=lambda r: r["compile_ms"] / r["kernel_ms"])[:slowest]:
        out.append(f"  {r['compile_ms'] / r['kernel_ms']:.3f} {r['spec']} {r['kernel_ms']:.3f} {r['compile_ms']:.3f} "
                   f"{r.get('kernels')}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--slowest", type=int, default=15)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
    print("\n".join(summarize(rows, args.slowest)))


if __name__ == "__main__":
    main()
