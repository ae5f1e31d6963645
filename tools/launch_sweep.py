"""Time the launch shapes of each spec's reduction, scan or pointwise kernels on a GPU.

For every spec given, the general lowering's program is generated here (also with rows kept
in registers only up to ``--whole-row-max`` elements, so rows walked in a loop are timed
beside whole rows), and the GPU launch of each kernel with an XBLOCK x RBLOCK tile is
rewritten, one kernel at a time (the others keep their launch): a kernel walking its
reduced (or scanned) elements in a loop of RBLOCK steps to every XBLOCK x RBLOCK split of a
few tile sizes, a kernel holding whole rows (RBLOCK fixed by the row) to every XBLOCK, each
at a few warp counts. Each variant is checked against the
reference on the GPU and the whole program timed with ``triton.testing.do_bench``. A
kernel's features are recorded beside its times: outputs (``xn``), elements reduced per
output (``rn``), and how many outputs lie in a row in memory after the reduced dims
(``run``: 1 where each output's elements are contiguous). With ``--pointwise`` the
pointwise kernels' launches are swept instead: BLOCK elements a program x warps, with the
widest element's bytes recorded. One JSON line per variant:

    python tools/launch_sweep.py SPEC.py ... > sweep.jsonl
    python tools/launch_sweep.py --pointwise SPEC.py ... > pointwise.jsonl

The tree scan (PyTorch's order, RBLOCK fixed to PyTorch's chunk) has its own sweep,
``scan_launch_sweep.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from kevolve.specfile import load_module  # noqa: E402
from services.generator.lowering import kernels as lowering_kernels  # noqa: E402
from services.generator.lowering import program_source  # noqa: E402
from services.generator.lowering import rows as lowering_rows  # noqa: E402
from services.generator.lowering.capture import capture  # noqa: E402
from services.generator.lowering.tunables import Tunables  # noqa: E402

# A launch in the GPU branch: name[grid](args..., XBLOCK=.., RBLOCK=.., more, num_warps=N
LAUNCH = re.compile(r"(?P<name>_k\w+)\[(?P<grid>\(\((?P<g>\d+),\) if gpu else \((?P<c>\d+),\)\)|\((?P<g2>\d+),\))\]"
                    r"\((?P<args>[^()]*?)XBLOCK=(?P<x>\d+)(?: if gpu else (?P<xc>\d+))?, "
                    r"RBLOCK=(?P<r>\d+)(?: if gpu else (?P<rc>\d+))?(?P<rest>[^()]*?), num_warps=(?P<w>\d+)")
# A pointwise kernel's GPU launch: name[grid](args..., BLOCK=.., more, num_warps=N
POINTWISE = re.compile(r"(?P<name>_k\w+)\[(?P<grid>\(\((?P<g>\d+),\) if gpu else \((?P<c>\d+),\)\)|\((?P<g2>\d+),\))\]"
                       r"\((?P<args>[^()]*?)\bBLOCK=(?P<b>\d+)(?: if gpu else (?P<bc>\d+))?(?P<rest>[^()]*?), "
                       r"num_warps=(?P<w>\d+)")
LOOP = re.compile(r"for roff in range\(0, (\d+), RBLOCK\)")
WHOLE = re.compile(r"rlin = tl.arange\(0, RBLOCK\)\[None, :\]\n.*mask = xmask & \(rlin < (\d+)\)")
OUTPUTS = re.compile(r"xmask = xlin < (\d+)")


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _close(got: list[Any], want: list[Any]) -> bool:
    for g, w in zip(got, want, strict=True):
        if not isinstance(w, torch.Tensor):
            continue
        if g.shape != w.shape or g.dtype != w.dtype:
            return False
        if w.dtype.is_floating_point:
            tol = 1e-2 if w.dtype in (torch.float16, torch.bfloat16) else 1e-4
            if not torch.allclose(g.float(), w.float(), atol=tol, rtol=tol, equal_nan=True):
                return False
        elif not torch.equal(g, w):
            return False
    return True


def _kernel_body(code: str, name: str) -> str:
    start = code.index(f"def {name}(")
    end = code.find("\n@triton.jit", start)
    return code[start:end if end > 0 else len(code)]


def _gpu_launches(pattern: re.Pattern[str], code: str) -> Iterator[tuple[re.Match[str], str]]:
    """Each kernel's first launch matching ``pattern`` outside an interpreter branch (the
    ``else:`` of a kernel with two sources), with the kernel's body."""
    seen = set()
    for launch in pattern.finditer(code):
        name = launch.group("name")
        line_start = code.rfind("\n", 0, launch.start())
        if name in seen or code[code.rfind("\n", 0, line_start) + 1:line_start].strip() == "else:":
            continue
        seen.add(name)
        yield launch, _kernel_body(code, name)


def sweepable_launches(code: str) -> Iterator[tuple[re.Match[str], str]]:
    """The GPU launches of kernels with an XBLOCK x RBLOCK tile, each with its form:
    "looped" (the reduced elements walked in RBLOCK steps, RBLOCK free: no gathers, which tie
    it to a scan's chunk, no unrolled walk over it) or "whole_row" (RBLOCK holds the row)."""
    for launch, body in _gpu_launches(LAUNCH, code):
        if not OUTPUTS.search(body) or "tl.gather" in body or "static_range(RBLOCK)" in body:
            continue
        if LOOP.search(body):
            yield launch, "looped"
        elif WHOLE.search(body):
            yield launch, "whole_row"


def pointwise_launches(code: str) -> Iterator[re.Match[str]]:
    """The GPU launches of pointwise kernels: a flat block of BLOCK elements per program."""
    for launch, body in _gpu_launches(POINTWISE, code):
        if "xlin = pid * BLOCK + tl.arange(0, BLOCK)" in body and OUTPUTS.search(body):
            yield launch


def _sweep_pointwise(stem: str, code: str, launch: re.Match[str], ref: Any, init: list[Any], inputs: list[Any],
                     want: list[Any], compile_ms: float | None, blocks: list[int], warps: list[int],
                     rep: int) -> None:
    name = launch.group("name")
    n = int(OUTPUTS.search(_kernel_body(code, name)).group(1))
    default = (int(launch.group("b")), int(launch.group("w")))
    cpu_grid, bc = launch.group("c") or launch.group("g2"), launch.group("bc") or launch.group("b")
    points = {(b, w) for b in blocks for w in warps if b <= max(256, 1 << (n - 1).bit_length())} | {default}
    for b, w in sorted(points):
        new = (f"{name}[((({math.ceil(n / b)},) if gpu else ({cpu_grid},)))]({launch.group('args')}"
               f"BLOCK={b} if gpu else {bc}{launch.group('rest')}, num_warps={w}")
        row = {"spec": stem, "program": "default", "kernel": name, "form": "pointwise", "n": n,
               "BLOCK": b, "num_warps": w, "default": (b, w) == default, "compile_ms": compile_ms,
               "bytes": _bytes_per_element(inputs, want)}
        _time_variant(row, code.replace(launch.group(0), new), f"{stem}_{name}_{b}_{w}", ref, init, inputs,
                      want, rep)


def _bytes_per_element(inputs: list[Any], want: list[Any]) -> int:
    """Bytes of the widest tensor input or output element (the kernel's widest stream)."""
    tensors = [t for t in [*inputs, *want] if isinstance(t, torch.Tensor)]
    return max((t.element_size() for t in tensors), default=0)


def _time_variant(row: dict[str, Any], variant: str, label: str, ref: Any, init: list[Any], inputs: list[Any],
                  want: list[Any], rep: int) -> None:
    """Check and time one rewritten program; print its row."""
    import triton.testing

    try:
        path = Path(tempfile.mkdtemp()) / "variant.py"
        path.write_text(variant)
        mod = load_module(variant, f"rsweep_{label}", None, str(path))
        model = mod.ModelNew(*init).cuda().eval()
        model.load_state_dict(ref.state_dict(), strict=False)
        with torch.no_grad():
            row["correct"] = _close(_listed(model(*inputs)), want)
            row["ms"] = triton.testing.do_bench(lambda m=model: m(*inputs), warmup=10, rep=rep)
    except Exception as exc:  # noqa: BLE001 - one variant's failure never stops the sweep
        row["error"] = f"{type(exc).__name__}: {exc}"[:300]
    print(json.dumps(row), flush=True)


def whole_rows(xn: int, r: int, sizes: list[int]) -> Iterator[tuple[int, int]]:
    """(XBLOCK, RBLOCK) pairs of a whole-row kernel: one row of ``r`` per program, and every
    power of two of rows from 256 elements up to the largest tile size."""
    x = 1
    while x * r <= max(sizes) and x <= max(1, 1 << (xn - 1).bit_length()):
        if x * r >= min(256, min(sizes)) or x == 1:
            yield x, r
        x *= 2


def splits(xn: int, rn: int, sizes: list[int]) -> Iterator[tuple[int, int]]:
    """(XBLOCK, RBLOCK) pairs of each tile size: RBLOCK from 8 up to the row, XBLOCK the rest
    (up to the outputs)."""
    for size in sizes:
        r = 8
        while r <= min(size, max(8, 1 << (rn - 1).bit_length())):
            x = size // r
            if x <= max(1, 1 << (xn - 1).bit_length()):
                yield x, r
            r *= 2


def _program(source: str, stem: str, cap: Any, whole_row_max: int | None) -> tuple[str, dict[int, int]]:
    """The program, and the ``run`` of each reduction length its launches were chosen for."""
    walked: list[tuple[int, int]] = []  # (rn, run) of each reduction launch, in lowering order
    original = lowering_kernels.walks_columns

    def recording(rn: int, run: int) -> bool:
        walked.append((rn, run))
        return original(rn, run)

    # Both modules that decide a reduction's walk by it (rows imported it by name).
    lowering_kernels.walks_columns = lowering_rows.walks_columns = recording
    tuned = Tunables(whole_row_max=whole_row_max) if whole_row_max else None
    try:
        code = program_source(source, stem, cap, tuned)
    finally:
        lowering_kernels.walks_columns = lowering_rows.walks_columns = original
    return code, {rn: run for rn, run in walked}


POINTWISE_BLOCKS = [256, 512, 1024, 2048, 4096, 8192]


def sweep(spec_path: Path, sizes: list[int], warps: list[int], rep: int, whole_row_max: int,
          with_compile: bool = False, pointwise: bool = False) -> None:
    import triton.testing

    source = spec_path.read_text()
    cap = capture(source, [("default", {})], str(spec_path))
    if not cap.ok:
        print(json.dumps({"spec": spec_path.stem, "error": f"capture failed: {cap.error[:300]}"}), flush=True)
        return
    spec = load_module(source, f"rsweep_spec_{spec_path.stem}", None, str(spec_path))
    torch.manual_seed(0)
    init = spec.get_init_inputs()
    ref = spec.Model(*init).cuda().eval()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in spec.get_inputs()]
    compile_ms = None
    with torch.no_grad():
        want = _listed(ref(*inputs))
        if with_compile:
            compiled = torch.compile(ref)
            try:
                compiled(*inputs)
                compile_ms = triton.testing.do_bench(lambda: compiled(*inputs), warmup=10, rep=rep)
            except Exception:  # noqa: BLE001 - the baseline is context only
                compile_ms = None
    programs = [("default", *_program(source, spec_path.stem, cap, None))]
    alternative = programs[0] if pointwise else _program(source, spec_path.stem, cap, whole_row_max)
    if alternative[0] != programs[0][1]:
        programs.append((f"whole_row_max={whole_row_max}", *alternative))
    if pointwise:
        for launch in pointwise_launches(programs[0][1]):
            _sweep_pointwise(spec_path.stem, programs[0][1], launch, ref, init, inputs, want, compile_ms,
                             POINTWISE_BLOCKS, [2, 4, 8], rep)
        return
    for program, code, runs in programs:
        launches = list(sweepable_launches(code))
        if not launches:
            print(json.dumps({"spec": spec_path.stem, "program": program, "error": "no reduction launch"}),
                  flush=True)
        for launch, form in launches:
            _sweep_launch(spec_path.stem, program, code, runs, launch, form, ref, init, inputs, want,
                          compile_ms, sizes, warps, rep)


def _sweep_launch(stem: str, program: str, code: str, runs: dict[int, int], launch: re.Match[str], form: str,
                  ref: Any, init: list[Any], inputs: list[Any], want: list[Any], compile_ms: float | None,
                  sizes: list[int], warps: list[int], rep: int) -> None:
    name = launch.group("name")
    body = _kernel_body(code, name)
    xn = int(OUTPUTS.search(body).group(1))
    looped = LOOP.search(body)
    rn = int(looped.group(1)) if looped else int(WHOLE.search(body).group(1))
    default = (int(launch.group("x")), int(launch.group("r")), int(launch.group("w")))
    cpu_grid = launch.group("c") or launch.group("g2")
    xc, rc = launch.group("xc") or launch.group("x"), launch.group("rc") or launch.group("r")
    tiles = splits(xn, rn, sizes) if form == "looped" else whole_rows(xn, default[1], sizes)
    points = {(x, r, w) for x, r in tiles for w in warps} | {default}
    for x, r, w in sorted(points):
        new = (f"{name}[((({math.ceil(xn / x)},) if gpu else ({cpu_grid},)))]({launch.group('args')}"
               f"XBLOCK={x} if gpu else {xc}, RBLOCK={r} if gpu else {rc}{launch.group('rest')}, num_warps={w}")
        row: dict[str, Any] = {"spec": stem, "program": program, "kernel": name, "form": form,
                               "xn": xn, "rn": rn,
                               "run": runs.get(rn), "XBLOCK": x, "RBLOCK": r, "num_warps": w,
                               "default": (x, r, w) == default, "compile_ms": compile_ms}
        _time_variant(row, code.replace(launch.group(0), new), f"{stem}_{name}_{x}_{r}_{w}", ref, init, inputs,
                      want, rep)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", type=Path)
    parser.add_argument("--sizes", nargs="+", type=int, default=[1024, 4096, 16384],
                        help="elements a program holds (XBLOCK x RBLOCK)")
    parser.add_argument("--warps", nargs="+", type=int, default=[4, 8])
    parser.add_argument("--rep", type=int, default=40, help="do_bench's rep (ms)")
    parser.add_argument("--whole-row-max", type=int, default=64,
                        help="also sweep the program lowered with rows kept in registers only up to this")
    parser.add_argument("--compile", action="store_true", help="time torch.compile beside (context only)")
    parser.add_argument("--pointwise", action="store_true",
                        help="sweep the pointwise kernels instead: BLOCK 256..8192 x 2, 4, 8 warps")
    args = parser.parse_args()
    for spec in args.specs:
        try:
            sweep(spec, args.sizes, args.warps, args.rep, args.whole_row_max, args.compile, args.pointwise)
        except Exception as exc:  # noqa: BLE001 - one spec's failure never stops the sweep
            print(json.dumps({"spec": spec.stem, "error": f"{type(exc).__name__}: {exc}"[:300]}), flush=True)


if __name__ == "__main__":
    main()
