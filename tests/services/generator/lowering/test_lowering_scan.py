"""The general lowering on scans and sorting, against PyTorch's own results.

Indices are compared exactly, so inputs with ties go through stable sorts only (PyTorch's
default sort, topk and kthvalue order ties as their algorithms happen to).
"""

from __future__ import annotations

import pytest
import torch
from lowering_check import GPU_TEST, _load, check, generate

from services.generator.lowering.tunables import Tunables

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def spec(forward: str, inputs: str) -> str:
    fwd = "".join(f"        {line}\n" for line in forward.strip().splitlines())
    return (HEAD + "\n\nclass Model(nn.Module):\n    def forward(self, *xs):\n" + fwd
            + f"\n\ndef get_inputs():\n    return [{inputs}]\n\ndef get_init_inputs():\n    return []\n")


INPUTS = {
    "float32": "torch.randn(4, 5, 6)",
    "int64": "torch.randint(-3, 4, (4, 5, 6))",
    "float16": "torch.randn(4, 5, 6).half()",
}
TOLERANCE = {"float32": 1e-4, "int64": 0.0, "float16": 2e-2}


@pytest.mark.parametrize("dtype", sorted(INPUTS))
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_cumprod_forward_reverse_exclusive_masked(dtype: str, dim: int) -> None:
    """Every dim, reversed through flips, exclusive through a subtraction, masked through
    where, and the dtype argument (the input is cast before the scan)."""
    forward = f"""
x = xs[0]
d = {dim}
return (torch.cumsum(x, d), torch.cumsum(x.flip(d), d).flip(d), torch.cumsum(x, d) - x,
        torch.cumsum(torch.where(x > 0, x, torch.zeros_like(x)), d), torch.cumsum(x, d, dtype=torch.float64),
        torch.cumprod(x, d), torch.cumprod(x.flip(d), d).flip(d))
"""
    tol = TOLERANCE[dtype]
    check(spec(forward, INPUTS[dtype]), atol=tol, rtol=tol)
    # The GPU's forms (PyTorch's order: a tree along the last dim, a walk along the others),
    # run under the interpreter on the same operators.
    check(spec(forward, INPUTS[dtype]), atol=tol, rtol=tol, form="gpu", trials=1)


@pytest.mark.parametrize("form", ["interpreter", "gpu"])
@pytest.mark.parametrize("dim", [0, 1])
def test_logcumsumexp_cummax_cummin_with_nan_and_ties(dim: int, form: str) -> None:
    """cummax/cummin keep the latest index of a tie and stay on the first NaN met, both in the
    interpreter's triangle and in the GPU's associative scan (its tree of the same combine)."""
    forward = f"""
x, t = xs
x = torch.where(x > 1.5, float("nan"), x)
y = torch.where(x < -2.0, float("-inf"), x)
return (torch.logcumsumexp(x, {dim}), torch.logcumsumexp(y, {dim}), *torch.cummax(x, {dim}), *torch.cummin(x, {dim}),
        *torch.cummax(t, {dim}), *torch.cummin(t, {dim}))
"""
    code = check(spec(forward, "torch.randn(7, 9), torch.randint(-2, 3, (7, 9))"), form=form)
    assert code.count("tl.associative_scan(") == 6


def test_the_gpus_combine_scan_carries_between_chunks() -> None:
    """The GPU's combine scans walk rows longer than a chunk (1024 there): the running
    extreme, its index and the log-sum-exp carry across chunks, ties and NaN included."""
    forward = """
x, t = xs
x = torch.where(x > 3.0, float("nan"), x)
return torch.logcumsumexp(x, 1), *torch.cummax(t, 1), *torch.cummin(x, 1)
"""
    check(spec(forward, "torch.randn(2, 1100), torch.randint(-40, 40, (2, 1100))"), form="gpu", trials=1)


def test_scans_of_rows_longer_than_a_block_carry_between_chunks() -> None:
    """Rows of 10000 elements: the interpreter's blocks hold 8192, so the carry is used."""
    forward = """
x, t = xs
return torch.cumsum(x, 1), torch.cumsum(t, 0), *torch.cummax(t, 1), torch.logcumsumexp(x, 1)
"""
    check(spec(forward, "torch.rand(2, 10000), torch.randint(-50, 50, (2, 10000))"))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_scan_along_an_outer_dim_gives_pytorchs_gpu_result_to_the_bit(dtype: str) -> None:
    """Along an outer dim PyTorch's GPU scan adds one element at a time in the tensor's own
    type (a 16-bit one rounded at every step): the GPU form does the same, so a long scan
    (where the exact sum and PyTorch's differ by more than the comparison's 1e-4) is equal,
    not close. The interpreter's form stays close to PyTorch's CPU result (accumulated in
    float64)."""
    source = spec("return xs[0].cumsum(0), torch.cumprod(xs[1], 1)",
                  f"torch.randn(700, 3, 40, dtype=torch.{dtype}), 1 + torch.rand(4, 900, 5, dtype=torch.{dtype}) / 64")
    code = generate(source)
    x = torch.randn(700, 3, 40, dtype=getattr(torch, dtype))
    y = 1 + torch.rand(4, 900, 5, dtype=getattr(torch, dtype)) / 64
    run = {form: _load(code.replace(GPU_TEST, "gpu = True") if form == "gpu" else code, f"scan_{dtype}_{form}")
           for form in ("gpu", "interpreter")}
    sums, prods = [x[0]], [y[:, 0]]
    for i in range(1, 700):
        sums.append(sums[-1] + x[i])  # PyTorch's GPU order and rounding, in PyTorch's own ops
    for j in range(1, 900):
        prods.append(prods[-1] * y[:, j])
    with torch.no_grad():
        gpu_sum, gpu_prod = run["gpu"].ModelNew()(x, y)
        cpu_sum, cpu_prod = run["interpreter"].ModelNew()(x, y)
    assert torch.equal(gpu_sum, torch.stack(sums)) and torch.equal(gpu_prod, torch.stack(prods, 1))
    tol = 1e-4 if dtype == "float32" else 2e-2
    torch.testing.assert_close(cpu_sum, x.cumsum(0), atol=tol, rtol=tol)
    torch.testing.assert_close(cpu_prod, y.cumprod(1), atol=tol, rtol=tol)
    # An exact float32 sum is not PyTorch's GPU result: the form matters.
    assert dtype != "float32" or not torch.equal(cpu_sum, gpu_sum)


def pytorch_gpu_inner_scan(t: torch.Tensor, product: bool = False) -> torch.Tensor:
    """PyTorch's GPU scan along the innermost dimension of a 2-d tensor (ScanUtils.cuh,
    tensor_kernel_scan_innermost_dim), written out step by step: chunks of twice the
    threads per row, the carry joined to a chunk's first element, then Sklansky steps. Each
    step computes in float32 and rounds to the tensor's type, as c10::Half's and
    c10::BFloat16's operators do (a no-op for float32)."""
    rows, n = t.shape
    log_x, log_y = (n - 1).bit_length(), (rows - 1).bit_length()
    threads_x = 1 << min(max(4, ((9 + log_x - log_y) % 2**32) // 2), 9)  # its uint32 arithmetic
    chunk = 2 * threads_x
    identity = 1.0 if product else 0.0

    def op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ((a.float() * b.float()) if product else (a.float() + b.float())).to(t.dtype)

    out = torch.empty_like(t)
    total = torch.full((rows,), identity, dtype=t.dtype)
    pos = torch.arange(chunk)
    for begin in range(0, n, chunk):
        seg = t[:, begin:begin + chunk]
        buf = torch.full((rows, chunk), identity, dtype=t.dtype)
        buf[:, :seg.shape[1]] = seg
        buf[:, 0] = op(buf[:, 0], total)
        s = 1
        while s <= threads_x:
            upper = pos[(pos & s) != 0]
            buf[:, upper] = op(buf[:, upper], buf[:, (upper & ~(s - 1)) - 1])
            s *= 2
        out[:, begin:begin + seg.shape[1]] = buf[:, :seg.shape[1]]
        total = buf[:, -1].clone()
    return out


@pytest.mark.parametrize(("dtype", "rows", "n"), [("float32", 6, 3000), ("float32", 1500, 3), ("float16", 5, 700),
                                                  ("bfloat16", 40, 90)])
def test_a_scan_along_the_innermost_dim_gives_pytorchs_gpu_result_to_the_bit(dtype: str, rows: int, n: int) -> None:
    """The GPU form of an innermost-dim sum or product is PyTorch's GPU scan to the bit: its
    chunk (1024 for 6 rows of 3000; 1024 too where 1500 rows of 3 wrap PyTorch's unsigned
    arithmetic; 1024 and 64 for the others), its tree, its rounding of 16-bit types at each
    step. The interpreter's form stays close to PyTorch's CPU result."""
    torch_dtype = getattr(torch, dtype)
    source = spec("return xs[0].cumsum(-1), torch.cumsum(xs[0].flip(1), 1).flip(1), torch.cumprod(xs[1], 1)",
                  f"torch.randn({rows}, {n}, dtype=torch.{dtype}), 1 + torch.rand({rows}, {n}, dtype=torch.{dtype}) / 64")
    code = generate(source)
    gpu = _load(code.replace(GPU_TEST, "gpu = True"), f"scan_inner_{dtype}_{rows}_gpu")
    cpu = _load(code, f"scan_inner_{dtype}_{rows}_cpu")
    torch.manual_seed(3)
    x = torch.randn(rows, n, dtype=torch_dtype)
    y = 1 + torch.rand(rows, n, dtype=torch_dtype) / 64
    with torch.no_grad():
        got = gpu.ModelNew()(x, y)
        near = cpu.ModelNew()(x, y)
    want = (pytorch_gpu_inner_scan(x), pytorch_gpu_inner_scan(x.flip(1)).flip(1), pytorch_gpu_inner_scan(y, True))
    for g, w in zip(got, want, strict=True):
        assert torch.equal(g, w)
    tol = TOLERANCE.get(dtype, 2e-2)
    for c, w in zip(near, (x.cumsum(-1), x.flip(1).cumsum(1).flip(1), y.cumprod(1)), strict=True):
        torch.testing.assert_close(c, w, atol=tol * n ** 0.5, rtol=tol)
    # An exact float32 scan is not PyTorch's GPU result: the order matters.
    assert dtype != "float32" or n < 100 or not torch.equal(got[0], x.double().cumsum(-1).float())


def test_the_tree_scan_reads_a_transposed_input_through_its_strides() -> None:
    """The GPU form of an innermost-dim scan of a transposed view equals PyTorch's algorithm
    on the view's values (the view is read where it lies, not copied)."""
    source = spec("return xs[0].t().cumsum(-1), torch.cumprod(xs[0].t(), 1)", "torch.randn(300, 7)")
    gpu = _load(generate(source).replace(GPU_TEST, "gpu = True"), "scan_tree_transposed")
    x = torch.randn(300, 7)
    with torch.no_grad():
        got = gpu.ModelNew()(x)
    view = x.t().contiguous()
    assert torch.equal(got[0], pytorch_gpu_inner_scan(view))
    assert torch.equal(got[1], pytorch_gpu_inner_scan(view, True))


def test_the_search_may_scan_exactly_instead_of_in_pytorchs_order() -> None:
    """SCAN_ORDER=exact gives the GPU the exact chunk scan (float32 accumulated in float64):
    still within tolerance of PyTorch on a short row, and no longer PyTorch's tree."""
    source = spec("return xs[0].cumsum(-1)", "torch.randn(8, 300)")
    exact = generate(source, tuned=Tunables.from_strings({"SCAN_ORDER": "exact"}))
    assert "tl.gather" in generate(source) and "tl.gather" not in exact
    gpu = _load(exact.replace(GPU_TEST, "gpu = True"), "scan_exact_gpu")
    x = torch.randn(8, 300)
    with torch.no_grad():
        torch.testing.assert_close(gpu.ModelNew()(x), x.cumsum(-1), atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="SCAN_ORDER"):
        Tunables.from_strings({"SCAN_ORDER": "fast"})


def test_boolean_and_integer_scans_promote_to_int64() -> None:
    forward = """
x = xs[0]
return torch.cumsum(x > 0, 1), torch.cumsum((x * 10).int(), 0), torch.cumprod((x > 0).long() + 1, 1)
"""
    check(spec(forward, "torch.randn(5, 8)"))


def test_few_rows_of_an_integer_scan_go_one_to_a_program() -> None:
    """An integer cumsum over 300 rows of 700: one row a GPU program (300 programs rather
    than 75 of four rows), on four warps; the result is the same in either launch form."""
    for form in ("gpu", "interpreter"):
        code = check(spec("return torch.cumsum(xs[0], 1)", "torch.randint(-5, 6, (300, 700))"), form=form, trials=1)
    launch = next(line for line in code.splitlines() if "_cumsum[" in line)
    assert "[((300,) if gpu" in launch and "XBLOCK=1 if gpu" in launch and "num_warps=4" in launch, launch


SORTS = {
    "float32": "torch.randn(6, 7, 9)",
    "int64": "torch.randint(-4, 5, (6, 7, 9))",
    "float16": "torch.randn(6, 7, 9).half()",
}


@pytest.mark.parametrize("dtype", sorted(SORTS))
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_any_dim_both_directions(dtype: str, dim: int, descending: bool) -> None:
    """Stable sorts with ties (integers) and NaN (placed last ascending, first descending)."""
    nan = "x = torch.where(x > 1.2, float('nan'), x)\n" if dtype != "int64" else ""
    forward = f"""
x = xs[0]
{nan}return (*torch.sort(x, dim={dim}, descending={descending}, stable=True),
        torch.argsort(x, dim={dim}, descending={descending}, stable=True))
"""
    check(spec(forward, SORTS[dtype]))


def test_default_sort_topk_kthvalue_median_of_distinct_values() -> None:
    """Distinct values (a permutation), so every index is determined."""
    forward = """
x = xs[0].float() / 3.0
return (*torch.sort(x, 1), *torch.sort(x, 0, descending=True), torch.msort(x), torch.argsort(x, -1),
        *torch.topk(x, 3, 1), *torch.topk(x, 2, 0, largest=False), *torch.topk(x, 4, -1, sorted=True),
        *torch.kthvalue(x, 4, 1), *torch.kthvalue(x, 2, 0, keepdim=True), *torch.median(x, 1),
        *torch.median(x, 0, keepdim=True), torch.median(x))
"""
    check(spec(forward, "torch.randperm(54).view(6, 9)"))


def test_median_and_nanmedian_with_nan_rows() -> None:
    """median is NaN (at the first NaN) where a row has one; nanmedian skips NaNs. Row 0 is
    all NaN: PyTorch's nanmedian index there is its algorithm's choice, so only its value
    is compared."""
    forward = """
x = xs[0].float() / 5.0
x = torch.where(xs[1] > 0.7, float("nan"), x)
x = torch.where(torch.arange(6)[:, None] == 0, float("nan"), x)
return (*torch.median(x, 1), *torch.nanmedian(x[1:], 1), torch.nanmedian(x, 1)[0], torch.nanmedian(x),
        *torch.median(x[:, :8], 1), *torch.topk(torch.where(x != x, -1.0 - xs[1], x), 3, 1, largest=False))
"""
    check(spec(forward, "torch.randperm(60).view(6, 10), torch.rand(6, 10)"))


def test_sorting_rows_longer_than_a_chunk() -> None:
    """Rows of 1500: the rank loop walks them in chunks of 1024 under the interpreter."""
    forward = """
x, t = xs
return *torch.sort(t, dim=1, stable=True), *torch.topk(x, 5, 1)
"""
    check(spec(forward, "torch.randperm(3000).view(2, 1500).float(), torch.randint(0, 50, (2, 1500))"))


def test_quantile_sorts_then_gathers() -> None:
    check(spec("return torch.quantile(xs[0], 0.3, dim=1), torch.quantile(xs[0], 0.75, dim=0, keepdim=True)",
               "torch.randn(6, 11)"))


def _launches(code: str) -> list[str]:
    wrapper = code.split("class ModelNew")[1]
    return [line.strip().split("[")[0] for line in wrapper.splitlines() if line.strip().startswith("_k")]


@pytest.mark.parametrize("dtype", ["int64", "float32", "float16"])
@pytest.mark.parametrize("form", ["interpreter", "gpu"])
def test_a_value_reading_a_scan_element_for_element_is_stored_by_the_scans_kernel(dtype: str, form: str) -> None:
    """An exclusive scan written as ``cumsum(x) - x`` (and scaled): one kernel computes the
    running sum and stores the value from it, the running sum itself never written out."""
    inputs = {"int64": "torch.randint(0, 64, (6, 3000))", "float32": "torch.randn(6, 3000)",
              "float16": "torch.randn(40, 90).half()"}[dtype]
    code = check(spec("x = xs[0]\nreturn (torch.cumsum(x, 1) - x) * 2", inputs), atol=TOLERANCE[dtype] or 1e-9,
                 rtol=TOLERANCE[dtype] or 1e-9, form=form, trials=1)
    launches = _launches(code)   # one kernel (a float sum's GPU and interpreter forms: two branches)
    assert len(launches) == (1 if dtype == "int64" else 2), launches
    assert all("cumsum_epilogue" in name for name in launches) and "STORE_RAW=0" in code, launches


def test_a_scan_read_element_for_element_and_returned_too_is_stored_by_the_same_kernel() -> None:
    code = check(spec("x = xs[0]\nc = torch.cumsum(x, -1)\nreturn c - x, c", "torch.randn(5, 700)"), trials=1)
    launches = _launches(code)   # the GPU and interpreter forms of one kernel, nothing else
    assert len(launches) == 2 and all("cumsum_epilogue" in name for name in launches), launches
    assert "STORE_RAW=0" not in code and "STORE_RAW=1" in code


def test_the_gpu_form_of_a_fused_scan_still_computes_pytorchs_gpu_scan_to_the_bit() -> None:
    x = torch.randn(6, 3000)
    code = generate(spec("x = xs[0]\nreturn torch.cumsum(x, 1) - x", "torch.randn(6, 3000)"))
    got = _load(code.replace(GPU_TEST, "gpu = True"), "fused_scan_gpu").ModelNew()(x)
    assert torch.equal(got, pytorch_gpu_inner_scan(x) - x)
