"""Capture and lower every spec of a corpus in this process (no evaluation): which specs get
a kernel program, and why the others do not. One JSON line per spec.

    python tools/corpus_lowering_survey.py bench/corpus --out survey.jsonl [--sizes screening]

This runs spec code in-process: use it on specs you wrote, not on a service's inputs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kevolve.specfile import outline  # noqa: E402
from services.generator.backends.general import capture_cases  # noqa: E402
from services.generator.lowering import program_source  # noqa: E402
from services.generator.lowering.capture import capture  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", default="", help="substring a spec's path must contain")
    args = parser.parse_args()
    specs = [p for p in sorted(args.root.rglob("*.py")) if p.name[:3].isdigit() and args.only in str(p)]
    with args.out.open("w") as out:
        for path in specs:
            source = path.read_text()
            started = time.perf_counter()
            row = {"spec": str(path.relative_to(args.root))}
            try:
                cap = capture(source, capture_cases(outline(source)), str(path))
                if not cap.ok:
                    row.update(status="capture", error=cap.error.splitlines()[0][:400])
                else:
                    code = program_source(source, path.stem, cap)
                    row.update(status="ok", kernels=code.count("@triton.jit"), lines=code.count("\n"))
            except Exception as exc:  # noqa: BLE001 - one spec's failure never stops the survey
                row.update(status="lower", error=f"{type(exc).__name__}: {exc}".splitlines()[0][:400])
            row["s"] = round(time.perf_counter() - started, 2)
            out.write(json.dumps(row) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
