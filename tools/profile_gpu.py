"""Profile kernels on a real GPU with the profiler's own code path, and keep the reports.

    python tools/profile_gpu.py                       # the built-in spec/candidate pairs below
    python tools/profile_gpu.py --spec examples/softmax.py --candidate my_kernel.py [--sizes dim=8192]
    python tools/profile_gpu.py --no-ncu              # torch.profiler only

For each pair it runs what ``python -m services.profiler`` runs for a ``cuda`` ProfileRequest
(sandboxed torch.profiler child, then ``ncu`` on the candidate's own kernels), and writes to
``--out`` (default ``profiles/``): ``<name>.json`` (the ProfileResult fields plus details: ncu's
per-kernel medians of every metric, top stalls) and one line per pair in ``summary.md``. A missing ncu or unreadable counters
are recorded in ``unavailable``, not hidden.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kevolve.config import CommonSettings  # noqa: E402
from kevolve.platforms import get_platform  # noqa: E402
from kevolve.v1 import profile_pb2  # noqa: E402
from services.profiler.config import ProfilerSettings  # noqa: E402
from services.profiler.handlers import ProfileFailed, Profiler  # noqa: E402

OUT = Path("profiles")
# (name, spec, candidate or None for the reference, sizes)
PAIRS: list[tuple[str, str, str | None, dict[str, int]]] = [
    ("softmax_rowwise", "examples/softmax.py", "tests/fixtures/kernels/correct/softmax_rowwise.py", {}),
    ("softmax_reference", "examples/softmax.py", None, {}),
    ("gelu_fused", "examples/gelu_scale_add.py", "tests/services/profiler/data/gelu_fused.py", {}),
    ("gelu_unfused", "examples/gelu_scale_add.py", "tests/services/profiler/data/gelu_unfused.py", {}),
]


def _sizes(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        if not value.isdigit():
            raise SystemExit(f"--sizes expects name=positive_int, got {item!r}")
        out[name] = int(value)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", help="spec file (KernelBench format)")
    parser.add_argument("--candidate", help="candidate file defining ModelNew (omit to profile the reference)")
    parser.add_argument("--name", help="report name (default: candidate or spec file stem)")
    parser.add_argument("--sizes", nargs="*", default=[], help="size overrides, name=value")
    parser.add_argument("--no-ncu", action="store_true", help="skip Nsight Compute")
    parser.add_argument("--no-bwrap", action="store_true", help="run children without bubblewrap")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: this script profiles on a GPU", file=sys.stderr)
        return 2
    pairs = PAIRS
    if args.spec:
        stem = Path(args.candidate or args.spec).stem
        pairs = [(args.name or stem, args.spec, args.candidate, _sizes(args.sizes))]
    settings = ProfilerSettings(platform="cuda", ncu_path="" if args.no_ncu else "ncu",
                                use_bwrap=not args.no_bwrap)
    common = CommonSettings()
    profiler = Profiler(settings, common, get_platform(common.kb_dir, "cuda"))
    args.out.mkdir(parents=True, exist_ok=True)
    lines = [f"\n## {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')} on {torch.cuda.get_device_name()} "
             f"(torch {torch.__version__}, ncu {'off' if args.no_ncu else shutil.which('ncu') or 'missing'})\n"]
    failures = 0
    for name, spec, candidate, sizes in pairs:
        request = profile_pb2.ProfileRequest(job_id="bench", node_id=name, platform="cuda", sizes=sizes)
        spec_text = (REPO / spec).read_text()
        cand_text = (REPO / candidate).read_text() if candidate else None
        try:
            result = profiler.profile(request, spec_text, cand_text)
        except ProfileFailed as exc:
            failures += 1
            record = {"name": name, "spec": spec, "candidate": candidate, "error": str(exc), "log": exc.log_tail,
                      "traceback": exc.tb}
            lines.append(f"- **{name}**: FAILED: {exc}")
        else:
            record = {"name": name, "spec": spec, "candidate": candidate, "sizes": sizes,
                      "bottleneck": result.bottleneck, "summary": result.summary, "metrics": result.metrics,
                      "tools": result.tools, "unavailable": result.unavailable, "details": result.details}
            lines.append(f"- **{name}** ({result.bottleneck}; tools {', '.join(result.tools)}"
                         f"{'; unavailable: ' + '; '.join(result.unavailable) if result.unavailable else ''}): "
                         f"{result.summary}")
        (args.out / f"{name}.json").write_text(json.dumps(record, indent=1, default=str))
        print(lines[-1], flush=True)
    with (args.out / "summary.md").open("a") as fh:
        fh.write("\n".join(lines) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    os.environ.pop("TRITON_INTERPRET", None)  # real GPU kernels, not the interpreter
    raise SystemExit(main())
