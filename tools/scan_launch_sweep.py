"""Time the launch shapes of each spec's PyTorch-order scan kernel on a GPU.

For every spec given, the general lowering's program is generated here, and the launch of
its tree scan (the ``*_cumsum`` / ``*_cumprod`` kernel launched on the GPU) is rewritten to
every XBLOCK x num_warps pair (1..64 x 1..8, at most 16384 elements a program). Each
variant is checked against PyTorch's own GPU result, bit for bit, and timed with
``triton.testing.do_bench``. One JSON line per variant on stdout:

    python tools/scan_launch_sweep.py bench/corpus/level1/185_cumsum_rows.py ... > sweep.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from kevolve.specfile import load_module  # noqa: E402
from services.generator.lowering import program_source  # noqa: E402
from services.generator.lowering.capture import capture  # noqa: E402

LAUNCH = re.compile(r"(\w+_(?:cumsum|cumprod))\[\((\d+),\)\]\(([^)]*?)XBLOCK=(\d+), RBLOCK=(\d+), num_warps=(\d+)\)")


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def sweep(spec_path: Path) -> list[dict[str, Any]]:
    import triton.testing

    source = spec_path.read_text()
    cap = capture(source, [("default", {})], str(spec_path))
    if not cap.ok:
        return [{"spec": spec_path.stem, "error": f"capture failed: {cap.error[:300]}"}]
    code = program_source(source, spec_path.stem, cap, None)
    launch = LAUNCH.search(code)  # the GPU branch's launch comes first
    if launch is None:
        return [{"spec": spec_path.stem, "error": "no scan kernel launch in the program"}]
    name, args = launch.group(1), launch.group(3)
    default = (int(launch.group(4)), int(launch.group(6)))
    chunk = int(launch.group(5))
    rows = int(re.search(r"xmask = xlin < (\d+)", code[code.index(f"def {name}("):]).group(1))
    spec = load_module(source, f"sweep_spec_{spec_path.stem}", None, str(spec_path))
    torch.manual_seed(0)
    ref = spec.Model(*spec.get_init_inputs()).cuda().eval()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in spec.get_inputs()]
    with torch.no_grad():
        want = _listed(ref(*inputs))
    out = []
    for xblock in (1, 2, 4, 8, 16, 32, 64):
        for warps in (1, 2, 4, 8):
            if xblock * chunk > 16384 or xblock > 2 * rows:
                continue
            variant = code.replace(launch.group(0), f"{name}[({math.ceil(rows / xblock)},)]({args}XBLOCK={xblock}, "
                                                    f"RBLOCK={chunk}, num_warps={warps})")
            row: dict[str, Any] = {"spec": spec_path.stem, "rows": rows, "chunk": chunk, "XBLOCK": xblock,
                                   "num_warps": warps, "default": (xblock, warps) == default}
            try:
                path = Path(tempfile.mkdtemp()) / "variant.py"
                path.write_text(variant)
                model = load_module(variant, f"sweep_{spec_path.stem}_{xblock}_{warps}", None, str(path))
                model = model.ModelNew(*spec.get_init_inputs()).cuda().eval()
                model.load_state_dict(ref.state_dict(), strict=False)
                with torch.no_grad():
                    got = _listed(model(*inputs))
                row["bit_exact"] = all(torch.equal(g, w) for g, w in zip(got, want, strict=True))
                row["ms"] = triton.testing.do_bench(lambda m=model: m(*inputs), warmup=25, rep=100)
            except Exception as exc:  # noqa: BLE001 - one variant's failure never stops the sweep
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            out.append(row)
            print(json.dumps(row), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", type=Path)
    for spec in parser.parse_args().specs:
        sweep(spec)


if __name__ == "__main__":
    main()
