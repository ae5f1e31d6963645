"""A stratified handful of the corpus through the real system on the cpu platform: files as
users write them (GPU sizes, no cpu_shapes), one job each, every one verified.

The whole slice (bench/corpus/ci_slice.txt, one spec per class of each level) runs the same
way with `kevolve bench bench/corpus/ci_slice.txt --platform cpu` (bench/results/corpus_ci_slice_cpu.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kevolve.client.bench import run_bench
from kevolve.client.launcher import start_system
from kevolve.config import REPO_ROOT

# About a minute and a half on 2 cores, more on a loaded machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

CORPUS = REPO_ROOT / "bench" / "corpus"
# One or two per level, of different operator classes; each one's screening sizes are derived.
HANDFUL = ["level1/051_gelu_tanh_fp16.py", "level1/169_layernorm_last_dim.py", "level2/106_linear_cross_entropy.py",
           "level2/025_linear_layernorm_gelu.py", "level3/001_resnet_basic_block.py",
           "random/010_reduction_amax_dims_1.py"]


def test_a_stratified_handful_of_the_corpus_gets_verified_kernels(tmp_path: Path) -> None:
    listing = tmp_path / "handful.txt"
    listing.write_text("".join(f"{CORPUS / entry}\n" for entry in HANDFUL))
    system = start_system(tmp_path / "run", ("cpu",))
    try:
        result = run_bench(listing, "cpu", budget=2, out_dir=tmp_path / "out", grpc_target=system.grpc_target,
                           parallel_jobs=3, job_timeout_s=600)
    finally:
        system.stop()
    assert sorted(s.spec for s in result.specs) == sorted(Path(e).stem for e in HANDFUL)
    failed = [(s.spec, s.state, s.error, s.failures) for s in result.specs if not s.correct]
    assert not failed, failed
