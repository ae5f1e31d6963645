"""Check the general lowering's kernel programs on a GPU at the specs' own (production) sizes.

For each spec: capture it, write the kernel program, run the program and the reference on
the GPU with the same weights and inputs, compare (the evaluator's tolerances: 1e-4 for
float32, 1e-2 for 16-bit floats), and time both with ``triton.testing.do_bench``, plus
``torch.compile`` of the reference when ``--compile`` is given. One JSON line per spec.

This runs spec code in-process: use it on specs you wrote, not on a service's inputs.

    python tools/lowering_gpu_check.py SPEC_OR_DIR ... --out results.jsonl [--compile] [--limit N]
        [--shard I/N --gpu-lock FILE] [--tunable BLOCK_K=64 ...] [--compare DIR]

``--compare DIR`` times, beside each spec's program, the one another checkout wrote for it
(``DIR/LEVEL__STEM.py``): the two are timed in turn in one process, so a change to the
lowering is measured without another process's noise between the two figures.

Several shards may run at once on one GPU: capture, lowering and compiles overlap, and the
correctness run and timings of one spec hold the lock file, so no two specs are timed at once.
float32 runs at full precision on both sides (TF32 off), as in the evaluator.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from kevolve.specfile import load_module  # noqa: E402
from services.generator.lowering import program_source  # noqa: E402
from services.generator.lowering.capture import capture  # noqa: E402
from services.generator.lowering.tunables import Tunables  # noqa: E402


def _outputs(value: Any) -> list[torch.Tensor]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _tolerance(dtype: torch.dtype) -> float:
    return 1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-4


@contextlib.contextmanager
def _gpu_lock(path: Path | None) -> Any:
    if path is None:
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _warm(fn: Any, inputs: list[Any]) -> None:
    """Compile outside the lock: Triton and Inductor compile on first call."""
    with torch.no_grad():
        fn(*inputs)
    torch.cuda.synchronize()


def program_name(path: Path) -> str:
    """The file name a spec's kernel program has in a ``--compare`` folder."""
    return f"{path.parent.name}__{path.stem}.py"


def check(path: Path, with_compile: bool, lock: Path | None = None, tuned: Tunables | None = None,
          compare: Path | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {"spec": str(path)}
    source = path.read_text()
    started = time.perf_counter()
    cap = capture(source, [("default", {})], str(path))
    row["capture_s"] = round(time.perf_counter() - started, 2)
    if not cap.ok:
        row.update(status="capture_failed", error=cap.error[:500])
        return row
    try:
        code = program_source(source, path.stem, cap, tuned)
    except Exception as exc:  # noqa: BLE001 - reported per spec
        row.update(status="lowering_failed", error=f"{type(exc).__name__}: {exc}"[:500])
        return row
    work = Path(tempfile.mkdtemp())
    (work / "cand.py").write_text(code)
    spec = load_module(source, f"gpu_spec_{path.stem}", None, str(path))
    cand = load_module(code, f"gpu_cand_{path.stem}", None, str(work / "cand.py"))
    torch.manual_seed(0)
    init = spec.get_init_inputs()
    ref = spec.Model(*init).cuda().eval()
    new = cand.ModelNew(*init).cuda().eval()
    new.load_state_dict(ref.state_dict(), strict=False)
    other = None
    other_file = compare / program_name(path) if compare is not None else None
    if other_file is not None and other_file.exists():
        other_code = other_file.read_text()
        row["other_same_code"] = other_code == code
        other = load_module(other_code, f"gpu_other_{path.stem}", None, str(other_file)).ModelNew(*init).cuda().eval()
        other.load_state_dict(ref.state_dict(), strict=False)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in spec.get_inputs()]
    compiled = torch.compile(ref) if with_compile else None
    try:
        _warm(new, inputs)
        if compiled is not None:
            _warm(compiled, inputs)
        if other is not None:
            _warm(other, inputs)
    except Exception as exc:  # noqa: BLE001
        row.update(status="run_failed", error=f"{type(exc).__name__}: {exc}"[:800],
                   trace=traceback.format_exc()[-1500:])
        return row
    with _gpu_lock(lock):
        return _measure(row, code, ref, new, compiled, inputs, other)


def _matches(want: list[torch.Tensor], got: list[torch.Tensor]) -> list[Any]:
    errors: list[Any] = []
    for w, g in zip(want, got, strict=True):
        tol = _tolerance(w.dtype)
        ok = w.shape == g.shape and (torch.allclose(g.float(), w.float(), atol=tol, rtol=tol, equal_nan=True)
                                     if w.is_floating_point() else torch.equal(g, w))
        if not ok:
            errors.append(float((g.float() - w.float()).abs().max()) if w.shape == g.shape else "shape")
    return errors


# Each contender is timed this many times, in turn, and its median kept: a burst of other
# work on the GPU (another shard's compile or first call) then shifts one sample, not a verdict.
ROUNDS = 3


def _measure(row: dict[str, Any], code: str, ref: Any, new: Any, compiled: Any, inputs: list[Any],
             other: Any = None) -> dict[str, Any]:
    import statistics

    import triton.testing

    try:
        with torch.no_grad():
            want = _outputs(ref(*inputs))
            got = _outputs(new(*inputs))
            torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001
        row.update(status="run_failed", error=f"{type(exc).__name__}: {exc}"[:800],
                   trace=traceback.format_exc()[-1500:])
        return row
    errors = _matches(want, got)
    row["correct"] = not errors
    if errors:
        row["max_abs_error"] = errors
    contenders = {"kernel_ms": new, "eager_ms": ref}
    if compiled is not None:
        contenders["compile_ms"] = compiled
    if other is not None:
        with torch.no_grad():
            row["other_correct"] = not _matches(want, _outputs(other(*inputs)))
        contenders["other_ms"] = other
    times: dict[str, list[float]] = {key: [] for key in contenders}
    with torch.no_grad():
        for _ in range(ROUNDS):
            for key, fn in contenders.items():
                times[key].append(triton.testing.do_bench(lambda fn=fn: fn(*inputs)))
    row.update({key: statistics.median(values) for key, values in times.items()})
    row["status"] = "ok"
    row["kernels"] = code.count("@triton.jit")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compile", action="store_true", help="also time torch.compile of the reference")
    parser.add_argument("--limit", type=int, default=0, help="at most this many specs")
    parser.add_argument("--shard", default="0/1", help="I/N: every N-th spec from the I-th")
    parser.add_argument("--gpu-lock", type=Path, default=None, help="a lock file shared by concurrent shards")
    parser.add_argument("--tunable", action="append", default=[], metavar="KEY=VALUE",
                        help="lower under this tunable (kb/lowering/tunables.toml's names); repeatable")
    parser.add_argument("--compare", type=Path, default=None,
                        help="a folder of kernel programs another checkout wrote for the same specs "
                             "(LEVEL__STEM.py): each is checked and timed beside this checkout's (other_ms)")
    args = parser.parse_args()
    tuned = Tunables.from_strings(dict(t.split("=", 1) for t in args.tunable)) if args.tunable else None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    specs = [p for path in args.paths for p in (sorted(path.rglob("*.py")) if path.is_dir() else [path])]
    if args.limit:
        specs = specs[: args.limit]
    index, count = (int(x) for x in args.shard.split("/"))
    specs = specs[index::count]
    with args.out.open("a") as out:
        for spec in specs:
            try:
                row = check(spec, args.compile, args.gpu_lock, tuned, args.compare)
                if args.tunable:
                    row["tunables"] = args.tunable
            except Exception as exc:  # noqa: BLE001 - one spec's failure never stops the run
                row = {"spec": str(spec), "status": "error", "error": f"{type(exc).__name__}: {exc}"[:800]}
            torch.cuda.empty_cache()
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
