"""Check a spec through the general lowering in this process: capture, lower, run the
generated ModelNew under Triton's interpreter and compare it with the reference Model.

Tests run this on specs they write inline (tests/ has no packages: imported by name).
The evaluator's sandboxed path is tested elsewhere; this is the fast loop for operators.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import torch

from kevolve.specfile import load_module
from services.generator.lowering import program_source
from services.generator.lowering.capture import capture
from services.generator.lowering.tunables import Tunables

os.environ.setdefault("TRITON_INTERPRET", "1")


def generate(source: str, sizes: dict[str, int] | None = None, name: str = "spec",
             tuned: Tunables | None = None) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(source)
    try:
        cap = capture(source, [("case", sizes or {})], fh.name)
    finally:
        os.unlink(fh.name)
    return program_source(source, name, cap, tuned)


def _load(source: str, name: str, sizes: dict[str, int] | None = None) -> types.ModuleType:
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(source)
    return load_module(source, name, sizes, str(path))


def _as_list(out: Any) -> list[torch.Tensor]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


GPU_TEST = 'gpu = dev.type == "cuda"'


def check(source: str, sizes: dict[str, int] | None = None, atol: float = 1e-4, rtol: float = 1e-4,
          trials: int = 2, form: str = "interpreter", tuned: Tunables | None = None) -> str:
    """Generate (under the search's choices ``tuned``, defaults when None), run and compare;
    returns the generated code (for further assertions).

    ``form="gpu"`` runs the kernels and launch shapes a GPU would (still under the
    interpreter), where a kernel has a form of its own for the interpreter."""
    code = generate(source, sizes, tuned=tuned)
    spec = _load(source, f"spec_{abs(hash(source)) % 10**8}", sizes)
    # The GPU's kernels and launch shapes, except bfloat16 tiles: the interpreter has no
    # bfloat16 product, so they go through float32 as the interpreter's own launches do.
    run = (code.replace(GPU_TEST, "gpu = True").replace("BF16_DOT=gpu", "BF16_DOT=False").replace("PTX=ptx", "PTX=False")
           if form == "gpu" else code)
    cand = _load(run, f"cand_{abs(hash(run)) % 10**8}")
    for trial in range(trials):
        torch.manual_seed(100 + trial)
        init = spec.get_init_inputs()
        torch.manual_seed(7)
        ref = spec.Model(*init).eval()
        torch.manual_seed(7)
        new = cand.ModelNew(*init).eval()
        new.load_state_dict(ref.state_dict(), strict=False)
        torch.manual_seed(1000 + trial)
        inputs = spec.get_inputs()
        with torch.no_grad():
            want = _as_list(ref(*inputs))
            got = _as_list(new(*inputs))
        assert len(want) == len(got), (len(want), len(got))
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            assert tuple(w.shape) == tuple(g.shape), (i, w.shape, g.shape)
            assert w.dtype == g.dtype, (i, w.dtype, g.dtype)
            if w.dtype.is_floating_point:
                torch.testing.assert_close(g, w, atol=atol, rtol=rtol, equal_nan=True,
                                           msg=lambda m: f"output {i}: {m}\n--- code ---\n{code[-6000:]}")
            else:
                assert torch.equal(g, w), (i, g, w, code[-4000:])
    return code


ROOT = Path(__file__).resolve().parents[4]


def run_compiled(script: str, *args: str, path: Path | None = None, timeout: float = 600) -> str:
    """``script`` (a file, or code) run in a process of its own with Triton compiling (this
    process has its interpreter on), kevolve and ``path`` importable; its stdout, asserting it
    succeeded. For the GPU tests."""
    paths = [str(p) for p in (path, ROOT) if p is not None] + [os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    env.pop("TRITON_INTERPRET", None)
    command = [script] if script.endswith(".py") else ["-c", script]
    done = subprocess.run([sys.executable, *command, *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


__all__ = ["check", "generate", "run_compiled", "sys"]
