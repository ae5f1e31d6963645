"""Specs of the suite's families at random small shapes: they load through kevolve.specfile and run,
and the offline generator reaches a kernel matching the reference on each of them.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from kevolve import specfile
from kevolve.client.bench import discover_specs
from kevolve.config import REPO_ROOT

_spec = importlib.util.spec_from_file_location("kevolve_random_specs",
                                               REPO_ROOT / "bench" / "suite" / "random_specs.py")
assert _spec and _spec.loader
random_specs: ModuleType = importlib.util.module_from_spec(_spec)
sys.modules["kevolve_random_specs"] = random_specs
_spec.loader.exec_module(random_specs)

SEED = 20261121
_ids = itertools.count()


def test_generation_is_deterministic_and_varied() -> None:
    a = random_specs.generate_random_specs(SEED, per_family=2)
    b = random_specs.generate_random_specs(SEED, per_family=2)
    assert [s.source for s in a] == [s.source for s in b]
    assert len(a) == 2 * len(random_specs.FAMILIES)
    c = random_specs.generate_random_specs(SEED + 1, per_family=2)
    assert [s.sizes for s in a] != [s.sizes for s in c]
    # Covers every family of the suite, with shapes that are not all powers of two.
    assert {s.family for s in a} >= {"softmax", "layernorm", "rmsnorm", "matmul_bias_gelu", "jagged_sum",
                                     "mapid", "mbdt_bucketize", "conv1d", "batch_event_truncate", "wukong_fm"}
    sizes = [v for s in a for v in s.sizes.values()]
    assert any(v & (v - 1) for v in sizes)
    with pytest.raises(ValueError, match="unknown families"):
        random_specs.generate_random_specs(SEED, families=["nope"])


def test_random_specs_load_and_run(tmp_path: Path) -> None:
    paths = random_specs.write_random_specs(tmp_path, SEED, per_family=2)
    assert discover_specs(tmp_path) == sorted(paths)   # the runner sees them as specs
    for path in paths:
        source = path.read_text()
        outline = specfile.check_outline(source)
        assert outline.cpu_sizes == outline.sizes   # small enough to screen as they are
        torch.manual_seed(next(_ids))
        module = specfile.load_module(source, f"_random_{path.stem}_{next(_ids)}", filename=str(path))
        model = module.Model(*module.get_init_inputs())
        with torch.no_grad():
            out = model(*module.get_inputs())
        assert isinstance(out, torch.Tensor) and out.numel() >= 1, path.stem
        if out.is_floating_point():
            assert torch.isfinite(out).all(), path.stem
        assert module.bytes_moved() > 0 and module.flops() > 0, path.stem
        # Size overrides (what the evaluator does for test cases) reach the Model through the constants.
        bigger = {k: v + 1 for k, v in outline.sizes.items() if k != "kernel"}
        big = specfile.load_module(source, f"_random_{path.stem}_{next(_ids)}", sizes=bigger,
                                   filename=str(path))
        assert big.bytes_moved() > module.bytes_moved(), path.stem


# -- the offline generator on random shapes ------------------------------------------------
# Every family of the suite, at shapes drawn with a fixed seed the templates were not written
# against: the offline backend must reach a candidate matching the reference (checked in
# process under the Triton interpreter) within the controller's expansion budget.
_fam_spec = importlib.util.spec_from_file_location("kevolve_offline_families_helpers",
                                                   REPO_ROOT / "tests" / "kb" / "test_offline_families.py")
assert _fam_spec and _fam_spec.loader
_families: ModuleType = importlib.util.module_from_spec(_fam_spec)
_fam_spec.loader.exec_module(_families)
evolve = _families.evolve

GENERATOR_SEED = 7331
GENERATOR_SPECS = random_specs.generate_random_specs(GENERATOR_SEED, per_family=1)


@pytest.fixture(scope="module")
async def offline_backend() -> AsyncIterator[Any]:
    from services.generator.backends.offline import OfflineBackend

    b = OfflineBackend(REPO_ROOT / "kb" / "templates", trace_timeout_s=120)
    yield b
    await b.aclose()


@pytest.mark.parametrize("spec", GENERATOR_SPECS, ids=[s.name for s in GENERATOR_SPECS])
async def test_offline_generator_reaches_a_correct_kernel(offline_backend: Any, tmp_path: Path,
                                                          spec: Any) -> None:
    gen, used = await evolve(offline_backend, spec.source, tmp_path)
    assert gen.code and used <= _families.MAX_EXPANSIONS
