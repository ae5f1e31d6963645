"""A warm zygote imports what every candidate's first guarded call would, once for all of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from kevolve.config import REPO_ROOT

# Packages whose import costs a candidate seconds (TorchDynamo pulls sympy, symbolic shapes
# and torch.distributed's tensor ops in).
HEAVY = ("torch._dynamo", "torch.fx.experimental", "sympy", "torch.distributed.tensor", "triton.experimental")

PROBE = textwrap.dedent('''
    import json, sys
    import torch, triton, triton.language as tl
    from services.evaluator.sandboxed import guards, zygote

    zygote.warm_imports()

    @triton.jit
    def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    recorder = guards.LaunchRecorder()
    x = torch.arange(8, dtype=torch.float32)
    before = set(sys.modules)
    with guards.observe_forward(recorder):      # what a candidate's first call runs under
        y = torch.empty_like(x)
        double[(1,)](x, y, 8, BLOCK=8)
    assert torch.equal(y, x * 2) and len(recorder.launches) == 1
    print(json.dumps(sorted(set(sys.modules) - before)))
''')


def test_a_candidates_first_guarded_call_imports_nothing_heavy_after_the_zygotes_warm_up(tmp_path: Path) -> None:
    # Before the warm-up covered it, the guards' dispatch mode imported TorchDynamo inside every
    # candidate's first forward: 2.8 s of each 3.5 s screening run on the cpu pool.
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO_ROOT)}
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    imported = json.loads(run.stdout.strip().splitlines()[-1])
    assert not [m for m in imported if m.startswith(HEAVY)], imported
