"""Every benchmark-suite spec loads, runs on the CPU at its screening sizes, and is non-degenerate."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import ModuleType

import pytest
import torch

from kevolve import specfile
from kevolve.client.bench import discover_specs, suite_table
from kevolve.config import REPO_ROOT

SUITE = REPO_ROOT / "bench" / "suite"
SPECS = discover_specs(SUITE)
_counter = itertools.count()


def _load(path: Path, sizes: dict[str, int] | None) -> ModuleType:
    return specfile.load_module(path.read_text(), f"_suite_{path.stem}_{next(_counter)}", sizes=sizes,
                                filename=str(path))


def _nbytes(obj: object) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(o) for o in obj)
    return 0


def test_suite_has_the_required_families() -> None:
    names = {p.stem for p in SPECS}
    required = {"softmax_fp16", "softmax_bf16_narrow", "log_softmax_fp16", "layernorm_fp16", "rmsnorm_fp16",
                "rmsnorm_backward_fp16", "gelu_scale_add_fp16", "row_sum_fp16", "row_max_fp16",
                "matmul_bias_gelu_fp16", "bmm_fp16", "pffn_matmul_bias_gelu_rmsnorm", "wukong_fm_xxty",
                "swiglu_bias_silu_mul", "residual_add_layernorm", "masked_scaled_softmax",
                "embedding_bag_sum", "dot_interaction", "conv1d_k3_fp16", "mapid", "mbdt_bucketize",
                "batch_event_truncate", "jagged_sum"}
    assert required <= names, f"missing: {sorted(required - names)}"


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_spec_runs_at_cpu_shapes_and_is_not_degenerate(path: Path) -> None:
    source = path.read_text()
    outline = specfile.check_outline(source)
    assert outline.cpu_sizes, "a suite spec gives cpu_shapes for screening"
    # Production sizes are what the GPU measures: never smaller than the screening sizes.
    for name, value in outline.cpu_sizes.items():
        assert outline.sizes[name] >= value, name
    for case in outline.test_cases:
        assert set(case["sizes"]) <= set(outline.sizes), case  # type: ignore[arg-type]

    torch.manual_seed(3)
    module = _load(path, outline.cpu_sizes)
    model = module.Model(*module.get_init_inputs())
    inputs = module.get_inputs()
    floats = [t for t in inputs if t.is_floating_point()]
    for t in inputs:
        assert not (t.is_floating_point() and t.isnan().any()), "NaN in inputs"
        assert t.numel() > 1 and t.unique().numel() > 1, "an input is constant"
    if floats:  # data of one sign hides sign bugs (a max starting at 0, an abs missing)
        assert any((t < 0).any() and (t > 0).any() for t in floats), "float inputs are all one sign"
    with torch.no_grad():
        out = model(*inputs)
    assert isinstance(out, torch.Tensor)
    assert out.numel() > 1
    if out.is_floating_point():
        assert torch.isfinite(out).all(), "output has NaN/inf"
    flat = out.flatten()
    assert not torch.equal(flat, flat[:1].expand_as(flat)), "output is constant"

    moved, flops = module.bytes_moved(), module.flops()
    assert moved > 0 and flops > 0
    # The minimal traffic at least writes the output, and never exceeds reading every
    # input and parameter plus writing the output (slack for expected-value formulas).
    params = sum(_nbytes(p) for p in itertools.chain(model.parameters(), model.buffers()))
    assert 0.5 * _nbytes(out) <= moved <= 1.3 * (_nbytes(inputs) + params + _nbytes(out))

    # At the production sizes (module top level only; no tensors built) the formulas stay positive
    # and grow with the problem.
    big = _load(path, None)
    assert big.bytes_moved() > moved and big.flops() > flops
    assert isinstance(big.bytes_moved(), int) and isinstance(big.flops(), int)


def test_rmsnorm_backward_equals_autograd() -> None:
    path = SUITE / "rmsnorm_backward_fp16.py"
    module = _load(path, {"rows": 8, "hidden": 64})
    model = module.Model(*module.get_init_inputs())
    x, g = module.get_inputs()
    xf = x.float().requires_grad_(True)
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + model.eps) * model.weight.float()
    (grad,) = torch.autograd.grad(y, xf, g.float())
    with torch.no_grad():
        got = model(x, g).float()
    torch.testing.assert_close(got, grad, atol=2e-2, rtol=2e-2)


def test_mapid_matches_the_paper_example() -> None:
    module = _load(SUITE / "mapid.py", None)
    values = torch.tensor([100, 300, 500, 200, 999])
    mapping = torch.tensor([100, 200, 300, 400, 500])
    assert module.Model()(values, mapping).tolist() == [1, 3, 5, 2, 0]
    values, mapping = _load(SUITE / "mapid.py", {"unique_ids": 100, "batch": 2000}).get_inputs()
    assert (mapping[1:] > mapping[:-1]).all(), "mapping is sorted and distinct"
    out = module.Model()(values, mapping)
    hit_rate = (out > 0).float().mean().item()
    assert 0.6 < hit_rate < 0.95, "mix of known and unknown ids"


def test_batch_event_truncate_keeps_the_last_events() -> None:
    module = _load(SUITE / "batch_event_truncate.py", None)
    values = torch.arange(20).reshape(2, 10)           # 2 features, 10 events in total
    offsets = torch.tensor([0, 3, 3, 10])               # lengths 3, 0, 7
    out = module.Model(4)(values, offsets)              # keep at most 4
    assert out.tolist() == [[0, 1, 2, 6, 7, 8, 9], [10, 11, 12, 16, 17, 18, 19]]


def test_jagged_sum_sums_segments_and_empty_rows_are_zero() -> None:
    module = _load(SUITE / "jagged_sum.py", None)
    values = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out = module.Model()(values, torch.tensor([0, 2, 2, 3]))
    assert out.tolist() == [[4.0, 6.0], [0.0, 0.0], [5.0, 6.0]]
    _, offsets = _load(SUITE / "jagged_sum.py", {"batch": 64, "avg_len": 10, "dim": 4}).get_inputs()
    assert int(offsets[-1]) == 640 and (offsets[1:] >= offsets[:-1]).all()


def test_mbdt_counts_borders_below_each_value() -> None:
    module = _load(SUITE / "mbdt_bucketize.py", None)
    borders = torch.tensor([[0.0, 1.0, 2.0], [10.0, 20.0, 30.0]])
    x = torch.tensor([[-1.0, 25.0], [1.0, 30.5], [1.5, 10.0]])
    assert module.Model()(x, borders).tolist() == [[0, 2], [1, 3], [2, 0]]


def test_readme_table_is_current() -> None:
    readme = (SUITE / "README.md").read_text()
    for path in SPECS:
        assert f"`{path.stem}`" in readme, f"{path.stem} missing from bench/suite/README.md"
    # The table is generated from the specs: a changed size or formula must be re-rendered.
    assert suite_table(SPECS, 3004) in readme, "bench/suite/README.md table is stale; regenerate it"
