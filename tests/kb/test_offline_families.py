"""The offline backend turns specs of every family into candidates that match the reference.

Each spec goes through the real backend (trace in a child process, template match, render);
the candidate's ModelNew is then run under the Triton interpreter against Model on the
spec's cpu sizes. A failing candidate is fed back as the parent with a diagnosis, as the
controller would, for up to 10 expansions. Random specs are generated with a fixed seed.
"""
from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import torch

from kevolve.config import REPO_ROOT
from kevolve.specfile import load_module, outline
from kevolve.v1 import common_pb2, work_pb2
from services.generator.backends.base import Generation
from services.generator.backends.offline import OfflineBackend

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "specs" / "generator"
MAX_EXPANSIONS = 10
TOLERANCES = {torch.float32: 1e-4, torch.float64: 1e-7, torch.float16: 1e-2, torch.bfloat16: 1e-2}


@pytest.fixture(scope="module")
async def backend() -> AsyncIterator[OfflineBackend]:
    b = OfflineBackend(REPO_ROOT / "kb" / "templates", trace_timeout_s=120)
    yield b
    await b.aclose()


def verify(spec_source: str, code: str, tmp: Path) -> str | None:
    """None when ModelNew matches Model at the spec's cpu sizes, else what went wrong."""
    tag = uuid.uuid4().hex[:8]
    spec_path, cand_path = tmp / f"spec_{tag}.py", tmp / f"cand_{tag}.py"
    spec_path.write_text(spec_source)
    cand_path.write_text(code)
    spec = load_module(spec_source, f"spec_{tag}", outline(spec_source).cpu_sizes or None, filename=str(spec_path))
    cand = load_module(code, f"cand_{tag}", filename=str(cand_path))
    torch.manual_seed(0)
    ref = spec.Model(*spec.get_init_inputs())
    torch.manual_seed(0)
    new = cand.ModelNew(*spec.get_init_inputs())
    new.load_state_dict(ref.state_dict())
    torch.manual_seed(1)
    inputs = spec.get_inputs()
    with torch.no_grad():
        want, got = ref(*inputs), new(*inputs)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"shape/dtype {tuple(got.shape)} {got.dtype} != {tuple(want.shape)} {want.dtype}"
    if want.is_floating_point():
        # The evaluator's per-dtype tolerances (KernelBench's): fp16/bf16 outputs may differ
        # by an ulp from the reference's rounding, fp32 must agree to 1e-4.
        tol = TOLERANCES.get(want.dtype, 1e-4)
        ok = torch.allclose(got.float(), want.float(), atol=tol, rtol=tol)
    else:
        ok = torch.equal(got, want)
    return None if ok else f"max abs error {(got.double() - want.double()).abs().max().item()}"


async def evolve(backend: OfflineBackend, source: str, tmp: Path) -> tuple[Generation, int]:
    """Expand until a candidate passes; returns the passing generation and the expansions used."""
    parent = common_pb2.NodeSummary()
    siblings: list[common_pb2.NodeSummary] = []
    diagnosis = work_pb2.Diagnosis(category="first_draft")
    errors = []
    for attempt in range(1, MAX_EXPANSIONS + 1):
        request = work_pb2.GenerateRequest(diagnosis=diagnosis)
        request.expand.seed = 1234 + attempt
        request.expand.parent.CopyFrom(parent)
        request.expand.ancestors.extend(siblings)
        gen = await backend.generate(request, "", source, None)
        assert gen.code, f"no code: {gen.error}"
        try:
            problem = verify(source, gen.code, tmp)
            category = "incorrect"
        except Exception as exc:  # the candidate failed to build or run
            problem, category = f"{type(exc).__name__}: {exc}", "compile_error"
        if problem is None:
            return gen, attempt
        errors.append(f"{gen.tunables}: {problem}")
        siblings.append(parent)
        parent = common_pb2.NodeSummary(node_id=f"n{attempt}", tunables=gen.tunables, verdict=common_pb2.INCORRECT)
        diagnosis = work_pb2.Diagnosis(category=category)
    raise AssertionError("no passing candidate in 10 expansions:\n" + "\n".join(errors))


# -- random specs (fixed seed) --------------------------------------------------------------
UNARY = ["torch.relu({})", "torch.sigmoid({})", "torch.tanh({})", "F.gelu({})", "F.silu({})",
         "torch.exp(-({}).abs())", "F.leaky_relu({}, 0.2)", "({}).clamp(-1.5, 2.0)", "F.gelu({}, approximate='tanh')",
         "F.softplus({})", "torch.square({})"]
BINARY = ["({} * {})", "({} + {})", "({} - 0.5 * {})", "torch.maximum({}, {})"]
SCALAR = ["({} * 1.7)", "({} + 0.3)", "({} / 2.5)", "(1.0 - {})"]
ROW = ["torch.softmax(x * 0.5, dim=-1)", "torch.log_softmax(x, dim=-1) + y", "self.ln(x)",
       "x.sum(-1)", "x.mean(dim=-1, keepdim=True)", "x.amax(-1) - y.amin(dim=-1)", "torch.var(x, dim=-1, keepdim=True)",
       "x - x.mean(-1, keepdim=True)", "torch.logsumexp(x, -1)",
       "x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w",
       "F.gelu(F.layer_norm(x, (x.shape[-1],), self.w, None, 1e-5))"]

SPEC = '''"""{doc}"""
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = {rows}
cols = {cols}

cpu_shapes = {{"rows": {rows}, "cols": {cols}}}


class Model(nn.Module):
    def __init__(self, cols: int) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(cols) * 0.1 + 1.0)
        self.ln = nn.LayerNorm(cols)
        with torch.no_grad():
            self.ln.bias.normal_()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return {expr}


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn({lead}rows, cols) * 2.0, torch.randn({lead}rows, cols)]


def get_init_inputs() -> list[object]:
    return [cols]
'''


def random_elementwise(rng: random.Random) -> str:
    expr = "x"
    for _ in range(rng.randint(2, 5)):
        kind = rng.random()
        if kind < 0.45:
            expr = rng.choice(UNARY).format(expr)
        elif kind < 0.8:
            other = rng.choice(["y", "self.w"])
            expr = rng.choice(BINARY).format(*((expr, other) if rng.random() < 0.5 else (other, expr)))
        else:
            expr = rng.choice(SCALAR).format(expr)
    lead = rng.choice(["", "2, "])
    return SPEC.format(doc=f"random elementwise: {expr}", rows=rng.randint(1, 40), cols=rng.randint(1, 300),
                       expr=expr, lead=lead)


def random_row(rng: random.Random, expr: str) -> str:
    cols = rng.choice([1, 7, 100, 513, 17000])
    rows = rng.randint(1, 6) if cols == 17000 else rng.randint(1, 40)
    return SPEC.format(doc=f"random row op: {expr}", rows=rows, cols=cols, expr=expr, lead="")


RNG = random.Random(20261121)
RANDOM_ELEMENTWISE = [random_elementwise(RNG) for _ in range(4)]
RANDOM_ROW = [random_row(RNG, e) for e in ROW] + [
    # long rows take the looped kernels (online softmax; multi-pass for the rest)
    SPEC.format(doc=f"long row: {e}", rows=3, cols=17000, expr=e, lead="")
    for e in ("torch.softmax(x, dim=-1)", "torch.log_softmax(x, dim=-1)", "self.ln(x) * y")
]


MID_SPEC = '''"""{doc}"""
import torch
import torch.nn as nn

a = 3
r = {r}
b = {b}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return {expr}


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(a, r, b)]


def get_init_inputs() -> list[object]:
    return []
'''
# reductions over a middle or leading axis (strided rows), short and long
MID_AXIS = [MID_SPEC.format(doc=e, expr=e, r=r, b=b) for e, r, b in [
    ("x.sum(dim=1)", 19, 37), ("torch.softmax(x, dim=1)", 50, 37), ("x - x.mean(1, keepdim=True)", 7, 37),
    ("x.amax(dim=0) * 2.0", 5, 37), ("torch.softmax(x, dim=1)", 17000, 2), ("torch.var(x, dim=-2)", 17000, 2),
]]


@pytest.mark.parametrize("index", range(len(MID_AXIS)))
async def test_reductions_over_other_axes(backend: OfflineBackend, tmp_path: Path, index: int) -> None:
    gen, _ = await evolve(backend, MID_AXIS[index], tmp_path)
    assert gen.tunables["template"] == "row_fused"


@pytest.mark.parametrize("name", ["softmax", "gelu_scale_add", "rmsnorm"])
async def test_demo_examples(backend: OfflineBackend, tmp_path: Path, name: str) -> None:
    source = (REPO_ROOT / "examples" / f"{name}.py").read_text()
    gen, used = await evolve(backend, source, tmp_path)
    assert gen.tunables["template"] in {"row_fused", "elementwise"} and used <= MAX_EXPANSIONS


@pytest.mark.parametrize("index", range(len(RANDOM_ELEMENTWISE)))
async def test_random_elementwise_chains(backend: OfflineBackend, tmp_path: Path, index: int) -> None:
    gen, _ = await evolve(backend, RANDOM_ELEMENTWISE[index], tmp_path)
    assert gen.tunables["template"] == "elementwise"


@pytest.mark.parametrize("index", range(len(RANDOM_ROW)), ids=[f"row{i}" for i in range(len(RANDOM_ROW))])
async def test_row_families(backend: OfflineBackend, tmp_path: Path, index: int) -> None:
    gen, _ = await evolve(backend, RANDOM_ROW[index], tmp_path)
    assert gen.tunables["template"] == "row_fused"


@pytest.mark.parametrize("name,template", [
    ("linear_gelu", "matmul_epilogue"), ("bmm_scale", "matmul_epilogue"), ("conv1d_relu", "conv1d_ncl"),
    ("mapid", "mapid"), ("bucketize", "bucketize"), ("jagged_sum", "jagged_sum"),
    # pow/casts on computed values; a broadcast [S, S] bias in a 4-d softmax
    ("rmsnorm_cast", "row_fused"), ("masked_softmax", "row_fused"),
    # factory calls on traced sizes (torch.zeros(n, d)) and the index_add_ spelling of a jagged sum
    ("jagged_index_add", "jagged_sum"),
    # transposed operands and GEMM chains / gathers / row-reducing epilogues
    ("mm_chain", "gemm_chain"), ("pair_gather", "gemm_pair_dot"), ("linear_layernorm", "matmul_row_epilogue"),
    ("searchsorted_rows", "searchsorted_tiles"), ("embedding_mean", "embedding_bag"),
    ("jagged_truncate_first", "jagged_truncate"),
])
async def test_fixture_families(backend: OfflineBackend, tmp_path: Path, name: str, template: str) -> None:
    gen, _ = await evolve(backend, (FIXTURES / f"{name}.py").read_text(), tmp_path)
    assert gen.tunables["template"] == template


# jagged_truncate's OUTPUT="bound" sizes its buffer before the data is read and returns the
# [..., total] prefix after the one sync: that must be the reference's contiguous tensor,
# for 1-d and [features, events] values, a cap above every length, and segments all empty.
TRUNCATE_FIRST = (FIXTURES / "jagged_truncate_first.py").read_text()
TRUNCATE_SPECS = {
    "first": TRUNCATE_FIRST,
    "cap_above_lengths": TRUNCATE_FIRST.replace('"cap": 4', '"cap": 40'),
    "all_empty": TRUNCATE_FIRST.replace("torch.randint(0, 2 * events + 1, (batch,))",
                                        "torch.zeros(batch, dtype=torch.int64)"),
    "features_last": (REPO_ROOT / "bench" / "suite" / "batch_event_truncate.py").read_text(),
}


@pytest.mark.parametrize("name", list(TRUNCATE_SPECS))
async def test_jagged_truncate_outputs_are_the_reference_tensor(backend: OfflineBackend, tmp_path: Path,
                                                                name: str) -> None:
    source = TRUNCATE_SPECS[name]
    render = Renderer(backend, source)
    spec = load_module(source, f"spec_{name}", outline(source).cpu_sizes or None)
    for output in ("bound", "exact"):
        code = render("jagged_truncate", OUTPUT=output)
        assert verify(source, code, tmp_path) is None, (name, output)
        cand = load_module(code, f"cand_{name}_{output}")
        torch.manual_seed(1)
        got = cand.ModelNew(*spec.get_init_inputs())(*spec.get_inputs())
        assert got.is_contiguous() and got.storage_offset() == 0, (name, output)


# The jagged-truncate template is chosen by what the index arithmetic computes, so a source
# index with the same ops that selects something else (here the segment's last events,
# reversed) must not be served by it.
NOT_TRUNCATE = (FIXTURES / "jagged_truncate_first.py").read_text().replace(
    "return values[offsets[:-1][seg] + pos]", "return values[offsets[1:][seg] - 1 - pos]")


async def test_index_arithmetic_that_is_not_a_truncation_is_refused(backend: OfflineBackend) -> None:
    assert "- 1 - pos]" in NOT_TRUNCATE
    request = work_pb2.GenerateRequest(diagnosis=work_pb2.Diagnosis(category="first_draft"))
    gen = await backend.generate(request, "", NOT_TRUNCATE, None)
    assert gen.code is None and "jagged truncate pattern" in gen.error


# Index pairs that are not a triangle: repeated pairs, negative indices (counted from the
# end, as torch does), M != N, and each float dtype the one-hot selection must keep exact.
PAIRS_ANY = (FIXTURES / "pair_gather.py").read_text()
PAIR_DOT_SPECS = [
    PAIRS_ANY,
    PAIRS_ANY.replace("torch.randint(0, m, (pairs,))", "torch.randint(-m, m, (pairs,))"),
    PAIRS_ANY.replace("torch.randn(batch, m, d), torch.randn(batch, n, d)",
                      "torch.randn(batch, m, d).half(), torch.randn(batch, n, d).half()"),
    PAIRS_ANY.replace("torch.randn(batch, m, d), torch.randn(batch, n, d)",
                      "torch.randn(batch, m, d).bfloat16(), torch.randn(batch, n, d).bfloat16()"),
]


class Renderer:
    """Any matching template of one spec (traced once at its cpu sizes) rendered at its
    defaults, some tunables overridden: for templates evolve() does not reach first."""

    def __init__(self, backend: OfflineBackend, source: str) -> None:
        from services.generator.offline.specparts import spec_parts
        from services.generator.tracer import trace

        self.backend, self.source, self.parts = backend, source, spec_parts(source)
        self.traced = trace(source, outline(source).cpu_sizes)
        templates, _, _ = backend.matching(self.traced)
        self.matching = {t.name: t for t in templates}

    def __call__(self, template: str, **tunables: str) -> str:
        assert template in self.matching, sorted(self.matching)
        t = self.matching[template]
        return self.backend.render(t, {**t.defaults(), **tunables}, self.traced, self.source, self.parts)


@pytest.mark.parametrize("index", range(len(PAIR_DOT_SPECS)), ids=["fp32", "negative", "fp16", "bf16"])
async def test_pair_dot_template_selects_any_pairs_exactly(backend: OfflineBackend, tmp_path: Path,
                                                           index: int) -> None:
    # 9 batches at the cpu sizes, so each of the interpreter's 4 persistent programs walks
    # several; d=21 and pairs=23, so BLOCK_K=16 and BLOCK_P=16 take the K and pair loops
    # instead of the single tiles
    source = PAIR_DOT_SPECS[index].replace('"batch": 3,', '"batch": 9,')
    assert source != PAIR_DOT_SPECS[index]
    render = Renderer(backend, source)
    assert {"gemm_pair_dot", "gemm_pair_gather"} <= set(render.matching)
    points = [("gemm_pair_gather", {})] + [
        ("gemm_pair_dot", {"SELECT": select, **loops}) for select in ("gather", "onehot")
        for loops in ({}, {"BLOCK_K": "16", "BLOCK_P": "16", "STAGES": "1"})]
    for name, tunables in points:
        assert verify(source, render(name, **tunables), tmp_path) is None, (name, tunables)


# gemm_chain runs a batched A (A^T C) whose product fits one tile on its persistent Gram
# kernel (A read once, transposed on chip): with an epilogue, each float dtype, 9 batches over
# the interpreter's 4 programs and odd sizes. A chain whose B is another tensor, or with
# GRAM="off", takes the tiled kernel, and must agree too.
GRAM_SOURCE = """
import torch
import torch.nn as nn

batch = 64
n = 512
d = 256
k = 64
cpu_shapes = {{"batch": 9, "n": 45, "d": 33, "k": 19}}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, c: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.bmm(a, torch.bmm({b}.transpose(1, 2), c)) * 0.5 - 0.1)


def get_inputs() -> list[torch.Tensor]:
    a, c, e = torch.randn(batch, n, d) / d ** 0.5, torch.randn(batch, n, k) / n ** 0.5, torch.randn(batch, n, d)
    return [a.to({dtype}), c.to({dtype}), e.to({dtype})]


def get_init_inputs() -> list[object]:
    return []
"""
GRAM_SPECS = {
    "fp32": (GRAM_SOURCE.format(b="a", dtype="torch.float32"), True),
    "fp16": (GRAM_SOURCE.format(b="a", dtype="torch.float16"), True),
    "bf16": (GRAM_SOURCE.format(b="a", dtype="torch.bfloat16"), True),
    "other_b": (GRAM_SOURCE.format(b="e", dtype="torch.float32"), False),
}


class _Launches:
    """Stands in for a @triton.jit kernel in a loaded candidate and counts its launches."""

    def __init__(self, kernel: object) -> None:
        self.kernel, self.count = kernel, 0

    def __getitem__(self, grid: object) -> object:
        self.count += 1
        return self.kernel[grid]


@pytest.mark.parametrize("name", list(GRAM_SPECS))
async def test_gemm_chain_gram_kernel_matches_the_reference(backend: OfflineBackend, name: str) -> None:
    source, is_gram = GRAM_SPECS[name]
    render = Renderer(backend, source)
    spec = load_module(source, f"spec_gram_{name}", outline(source).cpu_sizes or None)
    torch.manual_seed(1)
    inputs = spec.get_inputs()
    want = spec.Model()(*inputs)
    tol = TOLERANCES[want.dtype]
    for gram in ("auto", "off"):
        cand = load_module(render("gemm_chain", GRAM=gram), f"cand_gram_{name}_{gram}")
        assert hasattr(cand, "gemm_gram_kernel") == (gram == "auto")  # "off" renders the tiled kernel only
        launches = _Launches(getattr(cand, "gemm_gram_kernel", None))
        if gram == "auto":
            cand.gemm_gram_kernel = launches
        got = cand.ModelNew()(*inputs)
        assert launches.count == int(is_gram and gram == "auto"), (name, gram)
        assert torch.allclose(got.float(), want.float(), atol=tol, rtol=tol), (name, gram)


# conv1d_ncl reads each tap's input shifted along the sequence with its row pitch written as
# a multiple of the largest power of two dividing it: it must equal torch's conv at the
# sequence ends (zero padding), with dilation, at stride 2, with tiles shorter than the row
# and with either weight layout, and so must conv1d_igemm, now the second draft.
CONV = (FIXTURES / "conv1d_relu.py").read_text()
CONV_SPECS = {
    "stride2": CONV,
    "same": CONV.replace("stride=2, padding=1", "stride=1, padding=1"),
    "dilated": CONV.replace("stride=2, padding=1", "stride=1, padding=2, dilation=2"),
}
CONV_POINTS = [("conv1d_ncl", {}), ("conv1d_ncl", {"W_LAYOUT": "native"}), ("conv1d_ncl", {"BLOCK_L": "32"}),
               ("conv1d_igemm", {})]


@pytest.mark.parametrize("name", list(CONV_SPECS))
async def test_conv1d_templates_match_the_reference(backend: OfflineBackend, tmp_path: Path, name: str) -> None:
    source = CONV_SPECS[name]
    render = Renderer(backend, source)
    for template, tunables in CONV_POINTS:
        code = render(template, **tunables)
        assert verify(source, code, tmp_path) is None, (name, template, tunables)


# The descriptor-fed (TMA) GEMM templates have a lower priority than matmul_epilogue /
# matmul_row_epilogue, so evolve() never reaches them on these fixtures: render their
# defaults directly, over both operand layouts (a Linear's [N, K] weight is B transposed;
# a transposed A), each float dtype, and a row-reducing epilogue.
BMM = (FIXTURES / "bmm_scale.py").read_text().replace('"n": 18', '"n": 24')
TMA_SPECS = {
    "linear_gelu": ("matmul_tma", (FIXTURES / "linear_gelu.py").read_text()),
    "linear_layernorm": ("matmul_row_tma", (FIXTURES / "linear_layernorm.py").read_text()),
    "bmm_fp32": ("matmul_tma", BMM),
    "bmm_fp16": ("matmul_tma", BMM.replace("torch.randn(batch, m, k), torch.randn(batch, k, n)",
                                           "torch.randn(batch, m, k).half(), torch.randn(batch, k, n).half()")),
    "bmm_bf16": ("matmul_tma", BMM.replace("torch.randn(batch, m, k), torch.randn(batch, k, n)",
                                           "torch.randn(batch, m, k).bfloat16(), torch.randn(batch, k, n).bfloat16()")),
    "bmm_a_transposed": ("matmul_tma", BMM.replace("torch.bmm(a, b)", "torch.bmm(a.transpose(1, 2), b)")
                         .replace("torch.randn(batch, m, k), torch.randn(batch, k, n)",
                                  "torch.randn(batch, k, m), torch.randn(batch, k, n)")),
}


@pytest.mark.parametrize("name", list(TMA_SPECS))
async def test_tma_templates_match_the_reference(backend: OfflineBackend, tmp_path: Path, name: str) -> None:
    template, source = TMA_SPECS[name]
    # Three stages: the defaults' four of 128 x 128 x 64 float32 tiles (256 KB) fit no GPU's
    # shared memory, and the backend drafts the next set (test_offline_backend).
    code = Renderer(backend, source)(template, num_stages="3")
    assert "TensorDescriptor.from_tensor" in code
    assert verify(source, code, tmp_path) is None


async def test_tma_template_refuses_rows_a_descriptor_cannot_address(backend: OfflineBackend,
                                                                     tmp_path: Path) -> None:
    """Rows no descriptor can address are refused twice: when drafting, at the traced (the
    screening) sizes, and when called, for operands whose strides the trace did not show."""
    from services.generator.offline.ops import Unsupported

    # bmm_scale's cpu sizes give B rows of 18 fp32 values (72 bytes, not a multiple of 16)
    source = (FIXTURES / "bmm_scale.py").read_text()
    with pytest.raises(Unsupported, match=r"16-byte aligned rows; B .*72 bytes"):
        Renderer(backend, source)("matmul_tma")
    # Drafted where the traced rows align (24 fp32 values), called on a view whose rows do not.
    code = Renderer(backend, BMM)("matmul_tma", num_stages="3")
    model = load_module(code, "tma_refusal", None, str(tmp_path / "tma_refusal.py")).ModelNew()
    a, b = torch.randn(3, 20, 24), torch.randn(3, 24, 19)[:, :, :18]
    with pytest.raises(ValueError, match=r"matmul_tma: B of shape \(3, 24, 18\).*16-byte aligned rows"):
        model(a, b)


# searchsorted_tiles counts in two levels (group ends, then one group of S entries), which
# equals a binary search only on sorted rows: check it where the levels meet. Integer rows
# with ties and queries on the entries (right=True and False), groups larger than the row
# (S=16, 32 > 13 entries), a partial last group (13 = 3 x 4 + 1), a shared 1-D sequence,
# and MBDT's fp32 borders through transposed views.
SEARCH = (FIXTURES / "searchsorted_rows.py").read_text()
SEARCH_SPECS = {
    "right": SEARCH,
    "left": SEARCH.replace(", right=True)", ")"),
    "shared_1d": SEARCH.replace("torch.randint(0, 3, (rows, width)), dim=1", "torch.randint(0, 3, (width,)), dim=0"),
    "mbdt": (REPO_ROOT / "bench" / "suite" / "mbdt_bucketize.py").read_text(),
}


@pytest.mark.parametrize("group", ["auto", "8", "16", "32"])
@pytest.mark.parametrize("name", list(SEARCH_SPECS))
async def test_searchsorted_tiles_counts_like_a_binary_search(backend: OfflineBackend, tmp_path: Path,
                                                              name: str, group: str) -> None:
    source = SEARCH_SPECS[name]
    code = Renderer(backend, source)("searchsorted_tiles", S=group)
    assert verify(source, code, tmp_path) is None


def test_a_template_candidate_keeps_only_the_imports_its_copied_init_reads() -> None:
    """The spec's forward is not copied into a template's candidate: what only the forward
    imported (torch.nn.functional, which the evaluator refuses in a candidate) is left out."""
    from services.generator.offline.specparts import spec_parts

    source = ("import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
              "from torch import nn as tnn\n\nscale = 2\n\n"
              "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.s = math.sqrt(scale)\n    def forward(self, x):\n        return F.relu(x) * self.s\n")
    parts = spec_parts(source)
    assert "import math" in parts.imports and "import torch\n" in parts.imports
    assert "import torch.nn as nn" in parts.imports
    assert "functional" not in parts.imports and "tnn" not in parts.imports
    # One statement importing several modules: each kept or left out on its own.
    combined = spec_parts(source.replace("import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n",
                                         "import math, torch, torch.nn as nn, torch.nn.functional as F\n"))
    assert "import torch.nn as nn" in combined.imports and "functional" not in combined.imports


async def test_capitalised_forward_arguments_reach_the_template_candidate(backend: OfflineBackend,
                                                                          tmp_path: Path) -> None:
    """``forward(self, A, B)``: fx names its placeholders ``a`` and ``b``; the candidate's
    forward takes ``A`` and ``B``, and its body must read those (it once read ``a``)."""
    source = ('"""Matrix product with capitalised arguments."""\nimport torch\nimport torch.nn as nn\n\n'
              "M = 64\nK = 48\nN = 32\n\n\nclass Model(nn.Module):\n    def forward(self, A, B):\n"
              "        return torch.matmul(A, B)\n\n\ndef get_inputs():\n"
              "    return [torch.randn(M, K), torch.randn(K, N)]\n\n\ndef get_init_inputs():\n    return []\n")
    gen, _ = await evolve(backend, source, tmp_path)
    assert gen.tunables["template"] != "general"
