"""The general lowering on pointwise chains, reductions, views and matrix products."""

from __future__ import annotations

import dataclasses

import re

import pytest
from lowering_check import check, generate

from services.generator.lowering import tunables
from services.generator.lowering.kernels import column_launch, pointwise_launch
from services.generator.lowering.tunables import Tunables

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def spec(forward: str, inputs: str, init: str = "", init_args: str = "") -> str:
    body = f"    def __init__(self{', ' + init_args if init_args else ''}):\n        super().__init__()\n"
    body += "".join(f"        {line}\n" for line in init.splitlines()) if init else ""
    fwd = "".join(f"        {line}\n" for line in forward.strip().splitlines())
    return (HEAD + "\n\nclass Model(nn.Module):\n" + body + f"    def forward(self, *xs):\n{fwd}"
            + f"\n\ndef get_inputs():\n    return [{inputs}]\n\ndef get_init_inputs():\n    return [{init_args and ''}]\n")


CASES = {
    "gelu_tanh_chain": ("x = xs[0]\nreturn F.gelu(x, approximate='tanh') * torch.sigmoid(x) - x.abs().sqrt()",
                        "torch.randn(8, 33)"),
    "softmax_dim0": ("return torch.softmax(xs[0], dim=0)", "torch.randn(7, 19)"),
    "logsumexp_2dims": ("return torch.logsumexp(xs[0], dim=(1, 3), keepdim=True)", "torch.randn(3, 5, 4, 6)"),
    "mean_all": ("return xs[0].mean()", "torch.randn(5, 9)"),
    "var_std": ("return xs[0].var(dim=1, unbiased=True) + xs[0].std(dim=0, keepdim=True).sum()",
                "torch.randn(6, 10)"),
    "amax_argmax": ("return xs[0].amax(dim=-1), xs[0].argmax(dim=0), xs[0].argmin()", "torch.randn(6, 10)"),
    "transpose_matmul": ("return xs[0].t() @ xs[1]", "torch.randn(20, 17), torch.randn(20, 9)"),
    "bmm_broadcast": ("return torch.matmul(xs[0], xs[1])", "torch.randn(2, 3, 7, 5), torch.randn(5, 11)"),
    "matvec": ("return xs[0] @ xs[1]", "torch.randn(13, 21), torch.randn(21)"),
    "vecmat_half": ("return (xs[1] @ xs[0]).relu()", "torch.randn(21, 13).half(), torch.randn(21).half()"),
    "batched_dot": ("return torch.einsum('bd,bd->b', xs[0], xs[1]) * 2", "torch.randn(37, 19), torch.randn(37, 19)"),
    "bmm_one_column": ("return torch.bmm(xs[0], xs[1]).sum(-1)", "torch.randn(3, 9, 40), torch.randn(3, 40, 1)"),
    "cat_flip_roll": ("return torch.cat([xs[0].flip(1), xs[0].roll(2, 0)], dim=1)[:, 1::2]",
                      "torch.randn(6, 8)"),
    "pad_triu": ("return F.pad(torch.triu(xs[0]), (1, 2, 0, 1), value=-1.0)", "torch.randn(5, 5)"),
    "where_compare_int": ("x = xs[0]\nreturn torch.where(x > 0, x, x * 0.1), (x > 0).sum(dim=1)",
                          "torch.randn(4, 9)"),
    "integer_ops": ("a = xs[0]\nreturn a // 3 + a % 5 - (a * 2)", "torch.randint(-50, 50, (5, 7))"),
    "mlp_two_linears": ("return self.l2(torch.relu(self.l1(xs[0])))", "torch.randn(8, 16)"),
    "half_inputs": ("return (xs[0].float() * 2).half() + xs[0]", "torch.randn(6, 10).half()"),
    "unsqueeze_expand": ("return xs[0].unsqueeze(1).expand(-1, 4, -1) * xs[1].unsqueeze(0)",
                         "torch.randn(3, 5), torch.randn(4, 5)"),
    "layernorm_rms": ("x = xs[0]\nreturn F.layer_norm(x, (x.shape[-1],)) + x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)",
                      "torch.randn(4, 32)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowered_program_matches_the_reference(name: str) -> None:
    forward, inputs = CASES[name]
    init = "self.l1 = nn.Linear(16, 32)\nself.l2 = nn.Linear(32, 8)" if "self.l1" in forward else ""
    check(spec(forward, inputs, init))


@pytest.mark.parametrize("form", ["interpreter", "gpu"])
def test_products_of_many_small_matrices_share_interpreted_programs(form: str) -> None:
    """A batch of 300 small products (and one with a fused epilogue): under the interpreter a
    program takes many batch entries at once (a batched, three-dimensional form of the
    kernel); the GPU's form, an entry per program, computes the same."""
    code = check(spec("return torch.bmm(xs[0], xs[1]), torch.relu(torch.bmm(xs[0], xs[1]) * 2 + 1)",
                      "torch.randn(300, 7, 20), torch.randn(300, 20, 5)"), form=form)
    assert "_i[" in code and "BLOCK_Z=" in code


def test_float_attributes_are_read_at_run_time() -> None:
    source = (HEAD + "class Model(nn.Module):\n    def __init__(self, scale):\n        super().__init__()\n"
              "        self.scale = scale\n    def forward(self, x):\n        return x * self.scale + 1.0\n"
              "def get_inputs():\n    return [torch.randn(4, 8)]\ndef get_init_inputs():\n    return [0.75]\n")
    from lowering_check import _load, generate

    code = generate(source)
    cand = _load(code, "cand_scale")
    import torch

    x = torch.randn(4, 8)
    assert torch.allclose(cand.ModelNew(0.5)(x), x * 0.5 + 1.0)


def test_half_matmul_with_a_fused_epilogue_compiles_and_matches() -> None:
    """The fused product kernel casts the raw product to half before its optional store (a
    cast written inside that branch once broke the program's indentation)."""
    forward = "y = xs[0] @ xs[1] + xs[2]\nreturn torch.clamp(y, min=-1.0)"
    inputs = "torch.randn(16, 24).half(), torch.randn(24, 8).half(), torch.randn(8).half()"
    check(spec(forward, inputs), atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("online_max", ["lanes", "rows"])
@pytest.mark.parametrize("op", ["torch.softmax(x, dim=-1)", "F.log_softmax(x * 2, dim=1)"])
def test_long_rows_take_max_and_sum_of_exponentials_in_one_walk(op: str, online_max: str) -> None:
    """Rows longer than a block: the max and the shifted sum come from one pass over the row
    (the online softmax), its running max kept per lane or per row (ONLINE_MAX); rows of
    -inf, with a NaN, a huge value or mostly -inf keep the reference's results."""
    source = (HEAD + "class Model(nn.Module):\n    def forward(self, x):\n        return " + op + "\n\n"
              "def get_inputs():\n    x = torch.randn(6, 20000) * 4\n    x[0] = float('-inf')\n"
              "    x[1, 7] = float('nan')\n    x[2, 9000] = 1e30\n"
              "    x[3:] = torch.where(torch.rand(3, 20000) < 0.9, float('-inf'), x[3:])\n    return [x]\n\n"
              "def get_init_inputs():\n    return []\n")
    code = check(source, atol=1e-5, rtol=1e-5, tuned=Tunables(online_max=online_max))
    assert "macc" in code and code.count("for roff") == 2
    # Per row, the running max is one value a row, raised by each chunk's max.
    assert ("= tl.full([XBLOCK, 1], float(\"-inf\")" in code) == (online_max == "rows")


SPLIT = {
    "sum_all": ("x.sum()", "torch.randn(300000)"),
    "mse_mean": ("(x - x.flip(0)).pow(2).mean()", "torch.randn(70, 5000)"),
    "amax_two_dims_with_nan": ("x.amax(dim=(1, 2))", "torch.randn(3, 400, 300).index_fill_(1, torch.tensor([77]), float('nan'))"),
    "amin_over_rows": ("x.amin(dim=0)", "torch.randn(100000, 2)"),
    "any_bool": ("(x > 3.5).any(), (x > -9.0).all()", "torch.randn(200000)"),
    "softmax_few_long_rows": ("torch.softmax(x, -1)", "torch.randn(2, 100000)"),
}


@pytest.mark.parametrize("name", sorted(SPLIT))
def test_few_long_rows_are_reduced_by_many_programs(name: str) -> None:
    """A reduction of fewer rows than a GPU has multiprocessors, over long rows, is split:
    programs reduce slices of a row, a second kernel combines their partial results."""
    expr, inputs = SPLIT[name]
    source = (HEAD + "class Model(nn.Module):\n    def forward(self, x):\n        return " + expr + "\n\n"
              f"def get_inputs():\n    return [{inputs}]\n\ndef get_init_inputs():\n    return []\n")
    code = check(source, atol=1e-4, rtol=1e-4)
    assert "_split(" in code and "sid = tl.program_id(1)" in code


@pytest.mark.parametrize("mul", ["float32", "bfloat16"])
def test_searched_product_tiles_keep_their_pipeline_in_shared_memory(mul: str) -> None:
    """The largest tiles and deepest pipeline the search can pick still fit an H100 block's
    shared memory: stages give way (a kernel asking for more is refused at launch)."""
    from services.generator.lowering import tunables
    from services.generator.lowering.ops_heavy import SMEM_BUDGET, gpu_blocks

    space = {"BLOCK_M": "256", "BLOCK_N": "256", "BLOCK_K": "64", "num_stages": "5"}
    with tunables.using(tunables.Tunables.from_strings(space)):
        blocks = gpu_blocks(mul, 1, 4096, 4096)
    per_stage = (blocks.m * blocks.k + blocks.k * blocks.n) * (4 if mul == "float32" else 2)
    assert blocks.stages >= 1 and blocks.stages * per_stage <= SMEM_BUDGET
    with tunables.using(tunables.Tunables.from_strings({"num_stages": "4"})):
        assert gpu_blocks(mul, 1, 4096, 4096).stages == 4     # what fits is left as searched


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
@pytest.mark.parametrize("group", ["2", "16"])
def test_products_visit_their_tiles_in_the_searched_groups(form: str, group: str) -> None:
    """A search may order a product's tiles in groups of GROUP_M tile rows (operand tiles then
    shared in L2): every tile is still computed once, a partial last group included, for plain
    and batched products, on the GPU's launch shapes and the interpreter's. The first draft keeps
    the row-by-row order."""
    from services.generator.lowering import tunables

    source = spec("return torch.bmm(xs[0], xs[1]), xs[2] @ xs[3]",
                  "torch.randn(2, 300, 48), torch.randn(2, 48, 200), torch.randn(260, 40), torch.randn(40, 150)")
    code = check(source, form=form, trials=1, tuned=tunables.Tunables.from_strings({"GROUP_M": group}))
    assert f"GROUP_M={group} if gpu else 1" in code and "pid_m = first_m + (pid % in_group) % rows_here" in code
    assert "GROUP_M" not in check(source, form=form, trials=1)


def test_wide_float32_attention_heads_fit_shared_memory() -> None:
    source = (HEAD + "class Model(nn.Module):\n    def forward(self, q, k, v):\n"
              "        return F.scaled_dot_product_attention(q, k, v)\n\n"
              "def get_inputs():\n    return [torch.randn(1, 2, 40, 256), torch.randn(1, 2, 40, 256), torch.randn(1, 2, 40, 256)]\n\n"
              "def get_init_inputs():\n    return []\n")
    code = check(source, atol=1e-4, rtol=1e-4)
    import re

    # GPU values first where the interpreter's differ ("64 if gpu else 128").
    launch = re.search(r"BLOCK_M=(\d+), BLOCK_N=(\d+), BLOCK_D=(\d+)[^,]*, BLOCK_DV=(\d+), num_warps=\d+, num_stages=(\d+)", code)
    assert launch is not None, code[-2000:]
    bm, bn, bd, bdv, stages = (int(g) for g in launch.groups())
    assert bm * (bd + bn) * 4 + stages * bn * (bd + bdv) * 4 <= 200 * 1024


def test_bfloat16_chains_round_each_result_as_pytorch_does() -> None:
    """A bfloat16 residual add feeding a float32 norm: the sum is rounded to bfloat16 first
    (to nearest even, as on the GPU: the interpreter's truncation once failed this)."""
    source = (HEAD + "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.weight = nn.Parameter(torch.randn(256, dtype=torch.bfloat16) * 3)\n"
              "    def forward(self, x, residual):\n        residual = x + residual\n"
              "        h = residual.to(torch.float32)\n"
              "        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-5)\n"
              "        return self.weight * h.to(torch.bfloat16), residual\n\n"
              "def get_inputs():\n    return [torch.randn(64, 256, dtype=torch.bfloat16) * 4,"
              " torch.randn(64, 256, dtype=torch.bfloat16) * 4]\n\ndef get_init_inputs():\n    return []\n")
    code = check(source, atol=1e-2, rtol=1e-2, trials=3)
    assert ".to(tl.bfloat16)" in code


def test_a_bfloat16_product_is_rounded_before_its_fused_epilogue_reads_it() -> None:
    """x0 * (x W^T + b) + x in bfloat16 (a low-rank cross layer): the product is stored in
    bfloat16 by PyTorch before the multiply reads it; the fused epilogue rounds it too, and
    the result matches exactly."""
    source = (HEAD + "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.V = nn.Linear(32, 8, bias=False, dtype=torch.bfloat16)\n"
              "        self.U = nn.Linear(8, 32, dtype=torch.bfloat16)\n"
              "    def forward(self, x0, x):\n        return x0 * self.U(self.V(x)) + x\n\n"
              "def get_inputs():\n    x0 = torch.randn(256, 32, dtype=torch.bfloat16)\n    return [x0, x0.clone()]\n\n"
              "def get_init_inputs():\n    return []\n")
    check(source, atol=0.0, rtol=0.0, trials=3)


@pytest.mark.parametrize("forward", [
    # relu decomposes to le + where, both reading the residual sum: one kernel, not a stored sum and a relu pass
    "x, y = xs\nreturn torch.relu(torch.exp(x) * 0.5 + y * y - 1.0 + x)",
    # SiLU / GELU read their input twice; that input is itself a chain worth keeping in one kernel
    "x, y = xs\nreturn F.silu(x * y + torch.sin(x) - y / 3)",
    "x, y = xs\nreturn F.gelu(torch.exp(x) * y + x * 0.25 - 2.0)",
])
def test_a_chain_read_twice_within_one_elementwise_tail_stays_one_kernel(forward: str) -> None:
    code = check(spec(forward, "torch.randn(7, 33), torch.randn(7, 33)"))
    launches = code.split("class ModelNew")[1].count("_pointwise[")
    assert launches == 1, code


def test_a_chain_read_by_two_separate_results_is_still_stored_once() -> None:
    # Two outputs (and a reduction) read the same costly chain: it is stored, not computed thrice.
    code = check(spec("x, y = xs\nv = torch.exp(x) * 0.5 + y * y - 1.0 + x\nreturn v.relu(), v.sum(dim=1), v * 3",
                      "torch.randn(7, 33), torch.randn(7, 33)"))
    assert "shared" in code or code.split("class ModelNew")[1].count("_pointwise[") >= 2


@pytest.mark.parametrize(("forward", "dtype"), [
    # A half-precision norm or softmax reads its input as float32: that input, stored to be
    # shared (a reduction over another dim reads it too), is stored at 16 bits (exact) and
    # widened as it is read.
    ("x, y = xs\nv = (x + y).float()\nreturn F.layer_norm(v, (48,)).half(), v.sum(0)", "float16"),
    ("x, y = xs\nv = (x * y + x).float()\nreturn torch.softmax(v, dim=-1).bfloat16(), v.sum(0)", "bfloat16"),
])
def test_a_half_value_shared_as_float32_is_stored_at_half_width(forward: str, dtype: str) -> None:
    inputs = f"torch.randn(6, 48, dtype=torch.{dtype}), torch.randn(6, 48, dtype=torch.{dtype})"
    code = check(spec(forward, inputs), atol=1e-2, rtol=1e-2)
    buffers = [line for line in code.split("class ModelNew")[1].splitlines() if "torch.empty((6, 48)" in line]
    assert len(buffers) == 2 and all(f"torch.{dtype}" in line for line in buffers), buffers


@pytest.mark.parametrize(("forward", "dtype"), [
    # A residual add read by a layer norm's mean, variance and normalisation; a scaled, biased
    # input read by a softmax's max, exponentials and sum: the row program computes the value
    # in registers once per element, with no stored copy and no second kernel.
    ("x, y = xs\nreturn F.layer_norm(x + y, (48,))", "float16"),
    ("x, y = xs\nreturn torch.softmax(x * y + x, dim=-1)", "bfloat16"),
    ("x, y = xs\nreturn torch.log_softmax(torch.tanh(x) * 2.0 - y, dim=-1)", "float32"),
])
def test_a_value_read_only_by_one_row_program_is_computed_in_it(forward: str, dtype: str) -> None:
    inputs = f"torch.randn(6, 48, dtype=torch.{dtype}), torch.randn(6, 48, dtype=torch.{dtype})"
    tol = 1e-4 if dtype == "float32" else 1e-2
    for form in ("interpreter", "gpu"):
        wrapper = check(spec(forward, inputs), atol=tol, rtol=tol, form=form).split("class ModelNew")[1]
        launches = [line for line in wrapper.splitlines() if "](" in line and line.strip().startswith("_k")]
        assert len(launches) == 1 and "_row[" in launches[0], launches


def test_a_value_read_by_rows_too_long_for_registers_is_still_stored_once() -> None:
    # Such rows are walked once per reduction: the value would be recomputed at each walk.
    source = spec("x, y = xs\nreturn F.layer_norm(torch.exp(x) * y + torch.sin(x) - y / 3 + x * x, (48,))",
                  "torch.randn(6, 48), torch.randn(6, 48)")
    wrapper = check(source, tuned=Tunables(whole_row_max=32)).split("class ModelNew")[1]
    launches = [line.strip().split("[")[0] for line in wrapper.splitlines() if line.strip().startswith("_k")]
    assert len(launches) == 2 and launches[0].endswith("_pointwise") and launches[1].endswith("_row"), launches


def _launches(code: str) -> list[str]:
    wrapper = code.split("class ModelNew")[1]
    return [line.strip().split("[")[0] for line in wrapper.splitlines() if line.strip().startswith("_k")]


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_the_row_statistics_a_whole_sum_reads_are_one_row_program(form: str) -> None:
    """A KL divergence of two log-softmaxes, summed over every element: each row's max and
    sum of exponentials, of both tensors, in one row program walking each tensor once (the
    online softmax), which then sums its rows' terms; one more kernel sums the rows. Not a
    kernel per statistic, nor a split sum over every element reading the statistics again."""
    forward = """
s, t = F.log_softmax(xs[0] / 4, dim=-1), F.log_softmax(xs[1] / 4, dim=-1)
return F.kl_div(s, t, reduction="batchmean", log_target=True) * 16
"""
    code = check(spec(forward, "torch.randn(3, 9000) * 3, torch.randn(3, 9000) * 3"), atol=1e-4, rtol=1e-4,
                 form=form, trials=1)
    launches = _launches(code)
    assert len(launches) == 2 and launches[0].endswith("_amax_sum") and launches[1].endswith("_sum"), launches


@pytest.mark.parametrize(("forward", "inputs", "kernels"), [
    # The largest deviation from a row's mean over a whole batch: the row program computes
    # each row's mean and its largest deviation, one more kernel the largest of those.
    ("x = xs[0]\nreturn (x - x.mean(-1, keepdim=True)).abs().amax()", "torch.randn(5, 300)", ["_amax_sum", "_amax"]),
    # Over one dim of three beside the rows.
    ("x = xs[0]\nreturn (x - x.mean(-1, keepdim=True)).pow(2).sum((0, 2))", "torch.randn(4, 3, 50)", ["_sum", "_sum"]),
    # Few long rows are split across programs: no row program to join, the sum stays whole.
    ("x = xs[0]\nreturn (x - x.amax(-1, keepdim=True)).exp().sum()", "torch.randn(2, 70000)",
     ["_amax_split", "_amax", "_sum_split", "_sum"]),
])
def test_a_whole_reduction_of_values_reading_their_rows_statistics_goes_row_by_row(
        forward: str, inputs: str, kernels: list[str]) -> None:
    launches = _launches(check(spec(forward, inputs), atol=1e-3, rtol=1e-4, trials=1))
    assert len(launches) == len(kernels) and all(map(str.endswith, launches, kernels)), launches


def test_reductions_of_one_long_row_read_by_one_value_walk_it_once() -> None:
    # A loss's weighted sum and its count: both sums are split over many programs, in one
    # kernel that reads the inputs once, and finished by one more.
    code = check(spec("x, y = xs\nreturn (torch.sigmoid(x) * y).sum() / y.sum().clamp(min=1.0)",
                      "torch.randn(3, 70000), (torch.rand(3, 70000) < 0.01).float()"), atol=1e-3, rtol=1e-4)
    launches = _launches(code)
    assert len(launches) == 3 and launches[0].endswith("_split"), launches


def test_reductions_over_the_same_rows_read_by_one_value_share_a_kernel() -> None:
    # One element per row: the kernel computing the row's reductions stores the value too.
    code = check(spec("x, y = xs\nreturn x.exp().sum(-1) / (y * y).sum(-1) + x.amax(-1)",
                      "torch.randn(64, 48), torch.randn(64, 48)"))
    launches = _launches(code)
    assert launches == ["_k0_0_amax_sum"], launches


@pytest.mark.parametrize(("forward", "inputs"), [
    ("return torch.sqrt(xs[0].pow(2).sum(-1) + 1e-6) * 2", "torch.randn(6, 40)"),   # a norm per row
    ("return xs[0].amax(-1, keepdim=True).squeeze(-1).neg()", "torch.randn(6, 40)"),  # through views
    ("return xs[0].mean(1).unsqueeze(0) - xs[0].var(1)", "torch.randn(6, 40, 3)"),    # over a middle dim
])
def test_a_value_of_one_element_per_row_is_stored_by_the_reduction_kernel(forward: str, inputs: str) -> None:
    """No kernel of its own, nor a write and read of each reduction's result: the row
    program that computes the reductions computes the value and stores it."""
    launches = _launches(check(spec(forward, inputs)))
    assert len(launches) == 1 and not launches[0].endswith("_pointwise"), launches


def test_a_reduction_read_by_two_values_of_one_element_per_row_is_walked_once() -> None:
    # The first value's row program stores the sum as well (STORE_ROWS), the second reads it.
    code = check(spec("s = xs[0].sum(-1)\nreturn s * 2, s.exp()", "torch.randn(7, 30)"))
    launches = _launches(code)
    assert len(launches) == 2 and launches[-1].endswith("_pointwise") and "STORE_ROWS=1" in code, launches
    # Read once, the sum is not stored: its buffer is never allocated.
    code = check(spec("return xs[0].sum(-1) * 2", "torch.randn(7, 30)"))
    assert "STORE_ROWS=0" in code and code.count("torch.empty(") == 1, code


def test_a_value_reading_a_reduction_at_another_row_still_reads_it_stored() -> None:
    # Row i reads row i + 1's sum: not one row's own value, so the sum is stored first.
    code = check(spec("s = xs[0].sum(-1)\nreturn s[1:] - s[:-1]", "torch.randn(7, 30)"))
    launches = _launches(code)
    assert len(launches) == 2 and launches[-1].endswith("_pointwise"), launches


def test_an_output_that_is_a_reshape_of_a_value_is_returned_as_a_view() -> None:
    # A Linear on a 3-D input computes a 2-D product and returns it reshaped to 3-D: the
    # product (its bias as its epilogue) writes the output's storage itself, with no copy.
    code = check(spec("return self.lin(xs[0])", "torch.randn(2, 5, 16)", init="self.lin = nn.Linear(16, 24)"))
    wrapper = code.split("class ModelNew")[1]
    assert ".view((2, 5, 24))" in wrapper and "_pointwise[" not in wrapper, wrapper


def test_a_transposed_or_offset_view_of_a_buffer_is_still_copied() -> None:
    # Not the buffer's own order: returning a view would return the wrong layout.
    code = check(spec("return self.lin(xs[0]).t()", "torch.randn(6, 16)", init="self.lin = nn.Linear(16, 24)"))
    assert "_pointwise[" in code.split("class ModelNew")[1] or ".view((" not in code.split("class ModelNew")[1]
    code = check(spec("return (xs[0] * 2.0)[1:]", "torch.randn(6, 16)"))
    assert ".view((" not in code.split("class ModelNew")[1]


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_bfloat16_products_feed_the_gpu_tensor_cores_in_bfloat16(form: str) -> None:
    """A bfloat16 product multiplies its tiles as loaded on a GPU (BF16_DOT, set at launch) and
    through float32 under the interpreter, which has no bfloat16 product: the same exact
    products, summed in float32 either way."""
    source = spec("return xs[0] @ xs[1]", "torch.randn(70, 48, dtype=torch.bfloat16), torch.randn(48, 90, dtype=torch.bfloat16)")
    code = check(source, atol=1e-2, rtol=1e-2, form=form, trials=1)
    assert "BF16_DOT: tl.constexpr" in code and " if BF16_DOT else " in code and "BF16_DOT=gpu" in code


COLUMNS = {
    "sum_over_time": ("return xs[0].sum(1)", "torch.randn(3, 200, 40)"),
    "mean_keepdim_dim0": ("return xs[0].mean(0, keepdim=True)", "torch.randn(150, 6, 33)"),
    "amax_with_nan": ("return xs[0].amax(0)", "torch.randn(145, 80).index_fill_(1, torch.tensor([7]), float('nan'))"),
    "var_over_time": ("return xs[0].var(1)", "torch.randn(4, 190, 24)"),
    # (float scans along an outer dim walk one element at a time: test_lowering_scan.py)
    "int_cumsum_dim0": ("return (xs[0] * 10).long().cumsum(0)", "torch.randn(300, 2, 48)"),
    "any_dim0": ("return (xs[0] > 1.5).any(0)", "torch.randn(140, 3, 20)"),
    "max_with_index_over_time": ("v, i = xs[0].max(1)\nreturn v, i", "torch.randint(-3, 4, (3, 170, 40)).float()"),
}


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_reductions_and_scans_over_a_leading_dim_walk_columns(name: str, form: str) -> None:
    """Reduced (or scanned) elements apart in memory, over 128 of them, kept ones in runs: a
    GPU program takes a run of neighbouring columns and walks them in chunks (three for the
    scan's 300), with the same results in either launch form."""
    forward, inputs = COLUMNS[name]
    code = check(spec(forward, inputs), atol=1e-5, rtol=1e-5, form=form, trials=1)
    launch = next(line for line in code.splitlines() if "_sum[" in line or "_amax[" in line or "_var[" in line
                  or "_cumsum[" in line or "_argmax[" in line)
    columns = re.search(r"XBLOCK=(\d+) if gpu", launch)
    assert columns and int(columns.group(1)) >= 2 and "num_warps=4" in launch, launch


def test_few_columns_spread_over_many_programs() -> None:
    """A column walk keeps up to 256 neighbouring columns a program where there are columns
    enough, but few columns (512) go two to a program rather than 32 (16 programs), and every
    column walk runs on four warps: the rule a GPU sweep measured (kernels.column_launch)."""
    many, _ = column_launch(1 << 20, 512, 1 << 20)
    few, _ = column_launch(512, 4072, 512)
    assert many.meta == {"XBLOCK": 256, "RBLOCK": 16} and many.grid == (4096,)
    assert few.meta == {"XBLOCK": 2, "RBLOCK": 2048} and few.grid == (256,)
    assert many.num_warps == few.num_warps == 4


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_a_sum_read_through_a_transpose_walks_the_columns_it_lies_in(form: str) -> None:
    """``torch.mv(W.t(), x)`` sums each column of W: the logical rows are W's columns, so the
    reduction walks columns (a program takes neighbouring columns, a loop over K), as it
    would for ``W.sum(0)``, rather than holding whole strided rows."""
    code = check(spec("return torch.mv(xs[1].t(), xs[0])", "torch.randn(300), torch.randn(300, 200)"),
                 atol=1e-4, rtol=1e-4, form=form, trials=1)
    launch = next(line for line in code.splitlines() if "_sum[" in line and "XBLOCK=" in line)
    columns = re.search(r"XBLOCK=(\d+) if gpu", launch)
    assert columns and int(columns.group(1)) > 1 and "for roff in range(" in code, launch


def test_rows_of_booleans_apart_in_memory_take_four_times_the_rows() -> None:
    """An ``any`` over the leading dim of a boolean tensor keeps whole rows of 64, 256 of
    them a program (16384 one-byte elements), where float32 rows take 64 (4096 elements)."""
    flags = check(spec("return xs[0].any(0)", "torch.randn(64, 40, 300) > 1"), trials=1)
    floats = check(spec("return xs[0].sum(0)", "torch.randn(64, 40, 300)"), atol=1e-4, rtol=1e-4, trials=1)
    assert "XBLOCK=256 if gpu" in next(line for line in flags.splitlines() if "_sum[" in line)
    assert "XBLOCK=64 if gpu" in next(line for line in floats.splitlines() if "_sum[" in line)


def test_counts_of_booleans_accumulate_in_32_bits_and_come_out_int64() -> None:
    """``any``, ``all``, ``count_nonzero`` and a sum of a mask count booleans: the count runs
    in int32 (exact below 2**31 elements a row) and the result is PyTorch's int64."""
    forward = """
m = xs[0] > 0.5
return m.any(0), m.all(1), torch.count_nonzero(m, dim=1), m.sum(1) * 3000000000
"""
    code = check(spec(forward, "torch.randn(70, 50)"), trials=1)
    summed = re.findall(r"tl\.sum\(tl\.where\(mask, (\w+), 0\)", code)
    assert len(summed) == 4
    assert all(re.search(rf"{var} = \w+\.to\(tl\.int32\)", code) for var in summed), summed


def test_small_pointwise_tensors_spread_over_more_programs() -> None:
    """A pointwise kernel at the default launch (1024 elements on four warps) halves its
    block, down to 256 on two warps, while it would run under 1024 programs; a large tensor
    keeps the default, and a search's own block or warps are kept as chosen."""
    assert pointwise_launch(170_592) == (256, 2)
    assert pointwise_launch(600_000) == (512, 4)
    assert pointwise_launch(4_194_304) == (1024, 4)
    assert pointwise_launch(100) == (128, 2)
    with tunables.using(Tunables(pointwise_block=2048)):
        assert pointwise_launch(170_592) == (2048, 4)
    with tunables.using(Tunables(num_warps=8)):
        assert pointwise_launch(170_592) == (1024, 8)


def test_a_computed_operand_seen_transposed_is_stored_in_its_own_layout() -> None:
    """``y @ f(x).T`` with f costly: f(x) is stored as computed (40 x 24, each lane writing
    next to its neighbour) and the product reads the stored copy transposed."""
    source = spec("a = torch.sin(xs[0]) * torch.cos(xs[0]) + torch.exp(-xs[0]) * xs[0]\nreturn xs[1] @ a.transpose(0, 1)",
                  "torch.randn(40, 24), torch.randn(30, 24)")
    code = check(source, atol=1e-4, rtol=1e-4)
    wrapper = code.split("class ModelNew")[1]
    assert "torch.empty((40, 24)" in wrapper and "torch.empty((24, 40)" not in wrapper, wrapper


def test_unbound_views_of_a_product_read_its_output_in_place() -> None:
    """``linear(x).view(B, T, 3, H, D).unbind(2)``: the three views address the product's
    output (no kernel copies all of it once per view)."""
    source = spec("q, k, v = self.qkv(xs[0]).view(2, 5, 3, 4, 8).unbind(2)\nreturn q * 2 + k, v.relu()",
                  "torch.randn(2, 5, 32)", init="self.qkv = nn.Linear(32, 96)")
    code = check(source, atol=1e-4, rtol=1e-4)
    wrapper = code.split("class ModelNew")[1]
    assert "torch.empty((2, 5, 3, 4, 8)" not in wrapper, wrapper


TALL = {
    "sum_dim0": ("return xs[0].sum(0)", "torch.randn(5000, 40)"),
    "amax_dim0_nan": ("return xs[0].amax(0)", "torch.randn(5000, 40).index_fill_(0, torch.tensor([4321]), float('nan'))"),
    "var_mean_dim0": ("return torch.var_mean(xs[0] * 3 + 7, dim=0)", "torch.randn(5000, 40)"),
    "var_keepdim_unbiased0": ("return xs[0].var(0, keepdim=True, correction=0)", "torch.randn(4100, 2, 24)"),
}


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
@pytest.mark.parametrize("name", sorted(TALL))
def test_few_long_columns_are_reduced_in_slices(name: str, form: str) -> None:
    """Columns few and long (a statistic over the batch of a [5000, 40] matrix): programs
    reduce slices of every column, a second kernel combines them; a variance splits its two
    passes (the mean, then the squared deviations from it)."""
    forward, inputs = TALL[name]
    code = check(spec(forward, inputs), atol=1e-4, rtol=1e-4, form=form, trials=1)
    assert "_split[" in code and "sid = tl.program_id(1)" in code


def test_short_rows_apart_in_memory_keep_whole_rows() -> None:
    """128 elements or fewer per row: a program holds whole rows (runs of 32 columns), as a
    column walk of them measured slower."""
    code = check(spec("return xs[0].sum(1)", "torch.randn(3, 100, 40)"), atol=1e-5, rtol=1e-5, trials=1)
    launch = next(line for line in code.splitlines() if "_sum[" in line)
    assert "XBLOCK=32 if gpu" in launch and "RBLOCK=128" in launch, launch


ONE_WALK_VARIANCE = {
    # torch.var_mean over the batch: the variance and the mean returned beside it.
    "var_mean_dim0_offset": ("return torch.var_mean(xs[0], dim=0)", "torch.randn(6000, 40) * 0.01 + 1000"),
    # A layer norm over (C, H, W) of two samples: two long rows.
    "layer_norm_two_long_rows": ("return F.layer_norm(xs[0], xs[0].shape[1:])", "torch.randn(2, 4, 150, 160) * 3 + 5"),
    "std_long_row_keepdim": ("return xs[0].std(-1, keepdim=True, correction=0) + xs[0].mean(-1, keepdim=True)",
                             "torch.randn(3, 90000) + 50"),
}


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
@pytest.mark.parametrize("name", sorted(ONE_WALK_VARIANCE))
def test_a_split_variance_and_the_mean_beside_it_take_one_walk(name: str, form: str) -> None:
    """Few long rows: one kernel walks each row once for its variance (Welford's running
    mean and squared deviations per lane, merged across lanes and slices with Chan's
    formula: no cancellation when the mean dwarfs the spread) and for the sum beside it."""
    forward, inputs = ONE_WALK_VARIANCE[name]
    code = check(spec(forward, inputs), atol=1e-4, rtol=1e-4, form=form, trials=1)
    launches = _launches(code)
    splits = [name for name in launches if name.endswith("_split")]
    assert len(splits) == 1 and "sum" in splits[0] and "var" in splits[0], launches
    assert code.count("tl.load(in0_ptr") == 1 or name == "layer_norm_two_long_rows", code


@pytest.mark.parametrize(("rows", "length", "split"), [(128, 262144, True), (200, 65536, True), (64, 300000, True),
                                                     (256, 262144, False), (128, 60000, False)])
def test_fewer_long_rows_than_two_per_multiprocessor_are_split(rows: int, length: int, split: bool) -> None:
    """Up to 255 rows of 65536 elements or more: each row is cut in slices reduced by programs
    of their own (about 4096 programs in all: several waves), as one program a row leaves a GPU's
    multiprocessors too few loads in flight."""
    from services.generator.lowering.rows import split_count

    slices = split_count(rows, length)
    assert (slices > 1) == split and (not split or rows * slices <= 4096 + rows), slices


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_a_norm_over_rows_too_long_for_registers_walks_each_row_twice(form: str) -> None:
    """An instance norm of 128 rows of 9000 elements: one walk for each row's variance and
    mean together, one for the normalised values (a two-pass variance and a separate mean
    walked each row four times)."""
    source = spec("return F.instance_norm(xs[0]) * 2", "torch.randn(4, 32, 90, 100) * 4 + 20")
    code = check(source, atol=1e-4, rtol=1e-4, form=form, trials=1)
    assert code.count("for roff in range(") == 1 and "wdelta" in code, code
    assert len(_launches(code)) == 2, _launches(code)


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_max_with_indices_finds_values_and_indices_in_one_walk(form: str) -> None:
    """``x.max(dim)`` returning both: one kernel keeps each lane's best value beside its first
    position and stores both (NaN where a row holds one, at the NaN's first index)."""
    inputs = "torch.randint(-3, 4, (3, 170, 40)).float().index_fill_(1, torch.tensor([9, 50]), float('nan'))[:, :, :]"
    code = check(spec("v, i = xs[0].min(1)\nreturn v, i", inputs), atol=0, rtol=0, form=form, trials=1)
    assert len(_launches(code)) == 1, _launches(code)


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_the_max_and_min_of_every_element(form: str) -> None:
    """``x.max()``, ``x.min()`` (no dim) of floats with and without NaN, integers, booleans and
    float16, and a min-max scaling that reads both."""
    forward = """x, t, h, m = xs
y = torch.where(x > 2.0, float("nan"), x)
return (x.max(), torch.min(x), (x - x.min()) / (x.max() - x.min()), t.max(), t.min(), h.max(), m.max(), m.min(),
        y.max(), y[1:3].min())"""
    inputs = ("torch.randn(64, 33), torch.randint(-50, 50, (7, 9, 11)), torch.randn(300, dtype=torch.float16), "
              "torch.rand(5, 5) > 0.9")
    check(spec(forward, inputs), form=form)


def test_a_max_read_only_for_its_values_stays_in_the_row_program() -> None:
    """``x - x.max(-1, keepdim=True)[0]``: only the values are read, so the row program that
    reads them computes the max itself; no index is computed."""
    code = check(spec("m = xs[0].max(-1, keepdim=True)[0]\ne = torch.exp(xs[0] - m)\nreturn e / e.sum(-1, keepdim=True)",
                      "torch.randn(6, 50)"))
    assert len(_launches(code)) == 1 and "best_at" not in code, _launches(code)


def test_an_output_stored_through_a_reshape_keeps_its_row_program() -> None:
    """An affine instance norm of a 3-d input is a norm over a reshaped view: the output's row
    program, storing the reshaped base, computes each row's statistics itself (no separate
    kernel walks the rows first)."""
    code = check(spec("return self.norm(xs[0])", "torch.randn(4, 8, 300)", init="self.norm = nn.InstanceNorm1d(8, affine=True)"),
                 atol=1e-4, rtol=1e-4)
    launches = _launches(code)
    assert not [name for name in launches if "sum" in name or "var" in name], launches


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_large_float32_products_multiply_operands_split_once(form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large float32 product stores each operand once as TF32 high and low parts, K
    contiguous (a transposed weight, a batch, a product with an epilogue alike), and sums
    three TF32 products a K step from zero: float32 accuracy. Small ones keep tf32x3."""
    from services.generator.lowering import products_split

    source = spec("return torch.relu(xs[0] @ xs[1].t() + 1.0), torch.bmm(xs[2], xs[3]), xs[4] @ xs[5]",
                  "torch.randn(300, 96), torch.randn(260, 96), torch.randn(3, 64, 80), torch.randn(3, 80, 72), "
                  "torch.randn(64, 64), torch.randn(64, 64)")
    small = check(source, form=form, trials=1)
    assert "part = tl.dot" not in small and 'input_precision="tf32x3"' in small
    monkeypatch.setattr(products_split, "SPLIT_MIN_MACS", 10**6)
    monkeypatch.setattr(products_split, "SPLIT_MIN_K", 64)
    monkeypatch.setattr(products_split, "SPLIT_MIN_TILES", 3)
    monkeypatch.setattr(products_split, "SPLIT_MIN_ROWS", 64)
    code = check(source, form=form, trials=2)
    # The first two products split (one kernel per operand storing both its parts), the 64^3
    # one not.
    kernels = re.findall(r"\ndef (_k\w+)\(", code)
    split = {name for name in kernels if "_mm" in name or "_bmm" in name}
    summed = re.findall(r'acc \+= tl\.dot\((\w+), (\w+), part, input_precision="tf32"\)', code)
    assert len(summed) >= 2 and len(split) >= 3, (summed, kernels)
    assert code.count("& 0xFFFFE000") == 4 and len(re.findall(r"\ndef _k\w+_split\(", code)) == 4
    assert code.count('input_precision="tf32x3"') >= 1
    # A job that allows TF32 multiplies in plain TF32: nothing to split.
    plain = generate(source, tuned=Tunables(float32_dot="tf32"))
    assert "part = tl.dot" not in plain and "0xFFFFE000" not in plain


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_float32_products_summed_in_k_order_where_the_search_asks(form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """FLOAT32_PRODUCT=ieee: every float32 product multiplies with FMAs in K order (as a
    float32 GEMM library sums), neither split nor on tensor cores, and stays correct; a job
    that allows TF32 gets the same where the search asks for it."""
    from services.generator.lowering import products_split

    for name, value in (("SPLIT_MIN_MACS", 1), ("SPLIT_MIN_K", 16), ("SPLIT_MIN_TILES", 1), ("SPLIT_MIN_ROWS", 16)):
        monkeypatch.setattr(products_split, name, value)
    source = spec("return torch.relu(xs[0] @ xs[1].t() + 1.0), torch.bmm(xs[2], xs[3])",
                  "torch.randn(96, 64), torch.randn(80, 64), torch.randn(3, 48, 40), torch.randn(3, 40, 36)")
    ieee = tunables.Tunables.from_strings({"FLOAT32_PRODUCT": "ieee"})
    code = check(source, form=form, trials=2, tuned=ieee)
    assert code.count('input_precision="ieee"') >= 2 and "tf32" not in code and "_split(" not in code
    allowed = generate(source, tuned=dataclasses.replace(ieee, float32_dot="tf32"))
    assert 'input_precision="ieee"' in allowed and "tf32" not in allowed
    with pytest.raises(ValueError, match="FLOAT32_PRODUCT must be one of tensor, ieee"):
        tunables.Tunables.from_strings({"FLOAT32_PRODUCT": "tf32"})


def test_a_weight_broadcast_over_a_batch_is_not_split_once_per_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Splitting would store an expanded operand once per batch entry: such a product keeps
    tf32x3 (and stays correct)."""
    from services.generator.lowering import products_split

    for name, value in (("SPLIT_MIN_MACS", 1), ("SPLIT_MIN_K", 16), ("SPLIT_MIN_TILES", 1), ("SPLIT_MIN_ROWS", 16)):
        monkeypatch.setattr(products_split, name, value)
    source = spec("return torch.bmm(xs[0], xs[1].expand(6, -1, -1)), torch.bmm(xs[0], xs[2])",
                  "torch.randn(6, 40, 48), torch.randn(1, 48, 36), torch.randn(6, 48, 36)")
    code = check(source, trials=1)
    # The second product (a batch of its own) splits both operands; the first neither.
    assert len(re.findall(r"\ndef _k\w+_split\(", code)) == 2 and 'input_precision="tf32x3"' in code

