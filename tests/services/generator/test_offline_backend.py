"""Offline backend behaviour a user of the search notices: plain errors, determinism, and
tunable moves that follow the diagnosis without repeating what the job already tried."""
from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kevolve.config import REPO_ROOT
from kevolve.v1 import common_pb2, work_pb2
from services.generator.backends.distinct import code_key
from services.generator.backends.offline import OfflineBackend
from services.generator.offline.templates import Template, TemplateError, load_templates
from services.generator.backends.distinct import pick_new_code
from services.generator.backends.general import search_space
from services.generator.offline.tuning import preferences

SOFTMAX = (REPO_ROOT / "examples" / "softmax.py").read_text()
GELU = (REPO_ROOT / "examples" / "gelu_scale_add.py").read_text()

DATA_DEPENDENT = '''
import torch
import torch.nn as nn

n = 8

class Model(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x

def get_inputs():
    return [torch.randn(n)]

def get_init_inputs():
    return []
'''

HANGS = '''
import torch
import torch.nn as nn

while True:
    pass

class Model(nn.Module):
    def forward(self, x):
        return x

def get_inputs():
    return []

def get_init_inputs():
    return []
'''


@pytest.fixture
async def backend() -> AsyncIterator[OfflineBackend]:
    b = OfflineBackend(REPO_ROOT / "kb" / "templates", trace_timeout_s=60)
    yield b
    await b.aclose()


def choose(templates: list[Template], request: work_pb2.GenerateRequest) -> tuple[Template, dict[str, str]]:
    """The most preferred (template, tunables) for a request."""
    return next(iter(preferences(templates, request)))


def _request(seed: int = 3, parent: dict[str, str] | None = None, siblings: list[dict[str, str]] | None = None,
             category: str = "first_draft", bottleneck: str = "",
             mode: int = common_pb2.PARENT_TRAJECTORY) -> work_pb2.GenerateRequest:
    request = work_pb2.GenerateRequest(diagnosis=work_pb2.Diagnosis(category=category, bottleneck=bottleneck))
    request.expand.seed = seed
    request.expand.context_mode = mode
    if parent:
        request.expand.parent.node_id = "p"
        request.expand.parent.tunables.update(parent)
    for sib in siblings or []:
        request.expand.siblings.add(node_id="s", tunables=sib)
    return request


async def test_untraceable_and_hanging_specs_get_plain_errors(backend: OfflineBackend) -> None:
    gen = await backend.generate(_request(), "", DATA_DEPENDENT, None)
    # Neither tracer can follow a branch on tensor data; the error names the line.
    assert gen.code is None and "depends on tensor values" in gen.error and "line 9" in gen.error
    backend._worker.timeout_s = 3
    gen = await backend.generate(_request(), "", HANGS, None)
    assert gen.code is None and "longer than 3s" in gen.error
    # the killed worker is replaced: the next spec still works
    backend._worker.timeout_s = 60
    gen = await backend.generate(_request(), "", SOFTMAX, None)
    assert gen.code and gen.tunables["template"] == "row_fused"


async def test_same_request_same_code(backend: OfflineBackend) -> None:
    parent = {"template": "elementwise", "BLOCK": "1024", "num_warps": "4"}
    a = await backend.generate(_request(seed=5, parent=parent, category="slow"), "", GELU, None)
    b = await backend.generate(_request(seed=5, parent=parent, category="slow"), "", GELU, None)
    assert a.code == b.code and a.tunables == b.tunables and a.tunables != parent


def test_moves_follow_the_bottleneck_and_skip_tried_sets() -> None:
    templates = [t for t in load_templates(REPO_ROOT / "kb" / "templates") if t.name == "elementwise"]
    parent = {"template": "elementwise", "BLOCK": "1024", "num_warps": "4"}
    t, tun = choose(templates, _request(parent=parent, category="slow", bottleneck="launch_bound"))
    assert int(tun["BLOCK"]) > 1024 and tun["num_warps"] == "4"
    t, tun = choose(templates, _request(parent=parent, category="slow", bottleneck="occupancy_registers"))
    assert int(tun["BLOCK"]) < 1024
    # every larger BLOCK already tried by siblings: the search moves elsewhere, never repeats
    tried = [{**parent, "BLOCK": b} for b in ("2048", "4096", "8192")]
    _, tun = choose(templates, _request(parent=parent, siblings=tried, category="slow", bottleneck="launch_bound"))
    assert {"template": "elementwise", **tun} not in tried + [parent]


def test_a_slow_parent_tries_the_faster_forms_first_and_a_wrong_one_goes_back() -> None:
    """A correct general-lowering kernel slower than its baseline moves first to the forms
    that trade PyTorch's exact rounding or order for speed (judged by the comparison like any
    candidate); a kernel the comparison failed moves back to the exact ones, then to float32
    products summed in K order."""
    space = search_space(REPO_ROOT / "kb")
    parent = {"template": "general", **space.defaults()}
    request = _request(parent=parent, category="slow", bottleneck="compute_bound")
    request.expand.parent.verdict, request.expand.parent.fitness = common_pb2.PASSED, 0.4
    moves = [tun for _, tun in itertools.islice(preferences([space], request), 2)]
    assert {(k, v) for tun in moves for k, v in tun.items() if parent.get(k) != v} == {
        ("ATTENTION_SOFTMAX", "online"), ("SCAN_ORDER", "exact")}
    # Faster than its baseline: nothing to trade; the bottleneck's moves lead.
    request.expand.parent.fitness = 1.3
    _, tun = choose([space], request)
    assert tun["ATTENTION_SOFTMAX"] == "exact" and tun["SCAN_ORDER"] == "pytorch"
    wrong = {**parent, "ATTENTION_SOFTMAX": "online"}
    request = _request(parent=wrong, category="incorrect")
    request.expand.parent.verdict = common_pb2.INCORRECT
    moves = [tun for _, tun in itertools.islice(preferences([space], request), 2)]
    assert [{"template": "general", **tun} for tun in moves] == [
        {**wrong, "ATTENTION_SOFTMAX": "exact"}, {**wrong, "FLOAT32_PRODUCT": "ieee"}]
    # A wrong kernel already in the exact forms: its float32 products summed in K order next,
    # before any tile move.
    request = _request(parent=parent, category="incorrect", bottleneck="compute_bound")
    request.expand.parent.verdict = common_pb2.INCORRECT
    _, tun = choose([space], request)
    assert {"template": "general", **tun} == {**parent, "FLOAT32_PRODUCT": "ieee"}


def test_whole_space_is_walked_without_repeats() -> None:
    templates = [t for t in load_templates(REPO_ROOT / "kb" / "templates") if t.name == "elementwise"]
    size = len(templates[0].tunables["BLOCK"]) * len(templates[0].tunables["num_warps"])
    seen: list[dict[str, str]] = []
    parent: dict[str, str] | None = None
    for i in range(size):
        t, tun = choose(templates, _request(seed=i, parent=parent, siblings=seen, category="slow"))
        labelled = {"template": t.name, **tun}
        assert labelled not in seen
        seen.append(labelled)
        parent = labelled
    assert len(seen) == size


@pytest.mark.parametrize("allow_tf32", [False, True])
def test_float32_products_keep_float32_accuracy_unless_the_job_allows_tf32(allow_tf32: bool) -> None:
    """A GEMM template's float32 operands multiply at float32 accuracy (FMA products first,
    three TF32 products as a move) in a job that did not allow TF32: no candidate asks for
    TF32. A job that allows it gets TF32 in every candidate."""
    templates = [t for t in load_templates(REPO_ROOT / "kb" / "templates") if t.name == "matmul_epilogue"]
    request = _request(parent={"template": "matmul_epilogue", **templates[0].defaults()}, category="slow")
    request.expand.allow_tf32 = allow_tf32
    precisions = [tun["PRECISION"] for _, tun in itertools.islice(preferences(templates, request), 400)]
    assert set(precisions) == ({"tf32"} if allow_tf32 else {"tf32x3", "ieee"})
    first = _request()
    first.expand.allow_tf32 = allow_tf32
    assert choose(templates, first)[1]["PRECISION"] == ("tf32" if allow_tf32 else "ieee")


async def test_parallel_expansions_of_one_parent_propose_different_kernels() -> None:
    """A sibling still in flight took the first new kernel: the next one takes the second."""
    templates = [t for t in load_templates(REPO_ROOT / "kb" / "templates") if t.name == "elementwise"]
    parent = {"template": "elementwise", "BLOCK": "1024", "num_warps": "4"}

    async def render(_: object, tun: dict[str, str]) -> str:
        return repr(sorted(tun.items()))   # a distinct kernel per tunable set

    async def pick(request: work_pb2.GenerateRequest) -> dict[str, str]:
        found = await pick_new_code(preferences(templates, request), render, request.expand, 64)
        assert found is not None
        return found[1]

    picks = []
    for pending in range(3):
        request = _request(parent=parent, category="slow", bottleneck="launch_bound")
        request.expand.pending_siblings = pending
        picks.append(await pick(request))
    assert picks[0] == choose(templates, _request(parent=parent, category="slow", bottleneck="launch_bound"))[1]
    assert len({tuple(sorted(p.items())) for p in picks}) == 3
    # From the spec alone, two root expansions in flight start from different places too.
    roots = []
    for pending in range(2):
        request = _request()
        request.expand.pending_siblings = pending
        roots.append(await pick(request))
    assert roots[0] == templates[0].defaults() and roots[1] != roots[0]


async def test_a_long_search_gets_a_new_kernel_every_expansion(backend: OfflineBackend) -> None:
    """Tunable sets that render code the job already has are passed over: knobs that do not
    matter at the spec's shape no longer spend expansions on repeats the controller would
    de-duplicate. Told nothing of the job's code, the same walk repeats itself."""
    async def walk(tell: bool) -> list[str]:
        keys: list[str] = []
        parent: dict[str, str] | None = None
        for i in range(40):
            request = _request(seed=i, parent=parent, category="slow", bottleneck="memory_bound")
            if tell:
                request.expand.tried_code_keys.extend(reversed(keys))
            gen = await backend.generate(request, "", SOFTMAX, None)
            assert gen.code
            keys.append(code_key(gen.code))
            parent = gen.tunables if i % 4 == 0 else parent
        return keys

    told = await walk(tell=True)
    assert len(set(told)) == len(told)
    assert len(set(await walk(tell=False))) < len(told)


async def test_expansions_in_flight_get_kernels_of_their_own(backend: OfflineBackend) -> None:
    """Two expansions of one parent issued together, the second told the first is in flight,
    write different code, and neither writes code the job has."""
    parent = {"template": "elementwise", "BLOCK": "1024", "num_warps": "4"}
    have = await backend.generate(_request(seed=1, parent=parent, category="slow"), "", GELU, None)
    codes = []
    for pending in range(2):
        request = _request(seed=1, parent=parent, category="slow")
        request.expand.pending_siblings = pending
        request.expand.tried_code_keys.append(code_key(have.code or ""))
        gen = await backend.generate(request, "", GELU, None)
        codes.append(gen.code)
    assert codes[0] != codes[1] and have.code not in codes


def test_fresh_start_returns_to_defaults() -> None:
    templates = list(load_templates(REPO_ROOT / "kb" / "templates"))
    row = [t for t in templates if t.name == "row_fused"]
    parent = {"template": "row_fused", **row[0].defaults(), "ROWS": "8"}
    t, tun = choose(row, _request(parent=parent, mode=common_pb2.FRESH_START))
    assert t.name == "row_fused" and tun == row[0].defaults()


def test_malformed_template_is_named(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('name = "bad"\ncodegen = "row"\n[tunables]\nBLOCK = []\n')
    (tmp_path / "bad.py.j2").write_text("x")
    with pytest.raises(TemplateError, match="bad.toml: every tunable needs at least one value"):
        load_templates(tmp_path)


LINEAR_GELU = '''
import torch
import torch.nn as nn

batch, d_in, d_out = 256, 64, 128

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x))

def get_inputs():
    return [torch.randn(batch, d_in)]

def get_init_inputs():
    return []
'''


async def test_a_template_that_refused_the_operands_is_not_proposed_again(backend: OfflineBackend) -> None:
    """A template whose candidate failed with its own refusal (``ValueError: <template>: ...``:
    a TMA load of rows that are not 16-byte aligned) would refuse again with any tunables:
    the job's later expansions pass it over."""
    async def templates_proposed(refusal: bool) -> set[str]:
        seen: set[str] = set()
        for seed in range(12):
            request = _request(seed=seed, category="slow", bottleneck="compute_bound",
                               mode=common_pb2.FRESH_START)
            if refusal:
                request.expand.siblings.add(
                    node_id="s", verdict=common_pb2.RUNTIME_ERROR, tunables={"template": "matmul_tma"},
                    summary="RUNTIME_ERROR fitness=0.000 [runtime:exception] screen on cpu: ValueError: matmul_tma: "
                            "A of shape (256, 63), strides (63, 1) and dtype torch.float32 has no unit-stride ...")
            request.expand.pending_siblings = seed % 3
            gen = await backend.generate(request, "", LINEAR_GELU, None)
            assert gen.code, gen.error
            seen.add(gen.tunables["template"])
        return seen

    assert "matmul_tma" in await templates_proposed(refusal=False)
    refused = await templates_proposed(refusal=True)
    assert refused and "matmul_tma" not in refused


LINEAR_LAYERNORM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, {n})
        self.norm = nn.LayerNorm({n})

    def forward(self, x):
        return torch.sigmoid(self.norm(self.fc(x)))

def get_inputs():
    return [torch.randn(8, 64)]

def get_init_inputs():
    return []
'''


async def test_a_whole_row_gemm_tile_is_drafted_only_where_it_fits_the_gpu(backend: OfflineBackend) -> None:
    """A 2048-wide float32 row at the template's default tiles needs 790 KB of shared memory
    and would fail to compile: the first draft is the general lowering's (the next writer
    after the template's defaults), and the template's first tunable set whose tiles fit is
    the second (smaller rows keep the template's defaults)."""
    short = await backend.generate(_request(), "", LINEAR_LAYERNORM.format(n=256), None)
    assert short.tunables["template"] == "matmul_row_epilogue"
    assert (short.tunables["BLOCK_M"], short.tunables["BLOCK_K"], short.tunables["num_stages"]) == ("32", "32", "3")
    first = await backend.generate(_request(), "", LINEAR_LAYERNORM.format(n=2048), None)
    assert first.code and first.tunables["template"] == "general"
    second_request = _request()
    second_request.expand.pending_siblings = 1
    wide = await backend.generate(second_request, "", LINEAR_LAYERNORM.format(n=2048), None)
    assert wide.code and wide.tunables["template"] == "matmul_row_epilogue"
    bm, bk, stages = (int(wide.tunables[k]) for k in ("BLOCK_M", "BLOCK_K", "num_stages"))
    assert (bm * bk + bk * 2048) * 4 * stages <= 166912
    assert bm * 2048 <= 256 * 32 * int(wide.tunables["num_warps"])


def test_a_gemm_tile_set_is_drafted_only_where_its_pipeline_fits_the_gpu() -> None:
    """A float32 128 x 256 x 64 tile over three stages needs 288 KB of shared memory, more
    than any GPU served (one failed to compile on an H200): that set is passed over as not
    fitting, while the float32 default (192 KB, within a Hopper GPU's 227 KB) and the same
    wide tile in float16 (144 KB) are drafted."""
    from services.generator.offline.families import build_matmul
    from services.generator.offline.lower import lower
    from services.generator.offline.ops import DoesNotFit
    from services.generator.offline.specparts import spec_parts
    from services.generator.tracer import trace

    source = LINEAR_LAYERNORM.format(n=256).replace("torch.sigmoid(self.norm(self.fc(x)))", "torch.sigmoid(self.fc(x))")
    parts = spec_parts(source)
    wide = {"BLOCK_M": "128", "BLOCK_N": "256", "BLOCK_K": "64", "GROUP_M": "8", "num_warps": "8",
            "num_stages": "3", "PRECISION": "ieee"}
    with pytest.raises(DoesNotFit, match="294912 bytes"):
        build_matmul(lower(trace(source, {})), parts, wide)
    assert build_matmul(lower(trace(source, {})), parts, {**wide, "BLOCK_N": "128"})
    half = source.replace("nn.Linear(64, 256)", "nn.Linear(64, 256).half()").replace(
        "torch.randn(8, 64)", "torch.randn(8, 64).half()")
    assert build_matmul(lower(trace(half, {})), spec_parts(half), wide)


async def test_a_templates_defaults_that_do_not_fit_give_way_to_fewer_stages(backend: OfflineBackend) -> None:
    """The descriptor-fed template's defaults (128 x 128 x 64 over four stages) need 256 KB
    of shared memory for float32 tiles: its draft of a float32 linear takes three stages."""
    stages = set()
    for seed in range(12):
        request = _request(seed=seed, category="slow", bottleneck="compute_bound", mode=common_pb2.FRESH_START)
        request.expand.pending_siblings = seed % 3
        gen = await backend.generate(request, "", LINEAR_GELU, None)
        if gen.tunables.get("template") == "matmul_tma":
            stages.add(gen.tunables["num_stages"])
    assert stages and "4" not in stages


def test_a_broken_or_slow_template_parent_turns_to_the_general_lowering_first() -> None:
    """The general lowering is every templated spec's last alternative: a job drafts the
    template first and the general lowering second, and a template kernel that failed (a tile
    the GPU refused) or ran slower than its baseline is followed by the general lowering's
    draft before any tile move. A template kernel faster than its baseline keeps being tuned."""
    templates = [t for t in load_templates(REPO_ROOT / "kb" / "templates") if t.name == "elementwise"]
    space = search_space(REPO_ROOT / "kb")
    both = [*templates, space]
    first_two = [(t.name, tun) for t, tun in itertools.islice(preferences(both, _request()), 2)]
    assert first_two == [("elementwise", templates[0].defaults()), ("general", space.defaults())]

    parent = {"template": "elementwise", "BLOCK": "1024", "num_warps": "4"}

    def after(verdict: int, fitness: float, tried: list[dict[str, str]] | None = None) -> tuple[str, dict[str, str]]:
        request = _request(parent=parent, siblings=tried, category="slow", bottleneck="launch_bound")
        request.expand.parent.verdict, request.expand.parent.fitness = verdict, fitness
        t, tun = choose(both, request)
        return t.name, tun

    assert after(common_pb2.RUNTIME_ERROR, 0.0) == ("general", space.defaults())
    assert after(common_pb2.PASSED, 0.6) == ("general", space.defaults())
    name, tun = after(common_pb2.PASSED, 1.3)
    assert name == "elementwise" and int(tun["BLOCK"]) > 1024
    # The general lowering's draft already in the job: the template's own moves follow.
    name, tun = after(common_pb2.PASSED, 0.6, tried=[{"template": "general", **space.defaults()}])
    assert name == "elementwise" and int(tun["BLOCK"]) > 1024


async def test_a_failed_template_kernel_is_followed_by_the_general_lowerings_program(backend: OfflineBackend) -> None:
    """A linear + layernorm a template serves: after that template's kernel failed at run time,
    the next candidate is the general lowering's program of the whole spec."""
    source = LINEAR_LAYERNORM.format(n=256)
    draft = await backend.generate(_request(), "", source, None)
    assert draft.tunables["template"] == "matmul_row_epilogue"
    request = _request(parent=draft.tunables, category="runtime_error")
    request.expand.parent.verdict = common_pb2.RUNTIME_ERROR
    request.expand.tried_code_keys.append(code_key(draft.code or ""))
    gen = await backend.generate(request, "", source, None)
    assert gen.code and gen.tunables["template"] == "general", gen.error
    assert gen.code != draft.code and "triton.jit" in gen.code


# The linear + layernorm above at 2048 columns, its width a size constant the screening overrides.
WIDE_AT_ITS_OWN_SIZES = LINEAR_LAYERNORM.format(n="n").replace("import torch.nn as nn\n", "import torch.nn as nn\n\nn = 2048\n")


async def test_a_template_tile_must_fit_at_the_specs_own_sizes_not_only_the_screening_ones(
        backend: OfflineBackend) -> None:
    """Screened at 256 columns, run at 2048: the template's default row tile fits the first
    and overflows shared memory at the second (on a GPU: 520 KB asked, 227 KB there). No
    candidate of the template takes a tile that does not fit the spec's own width."""
    from services.generator.offline.families import SHARED_MEMORY_BYTES

    seen: list[dict[str, str]] = []
    for pending in range(3):
        request = _request()
        request.expand.cpu_sizes["n"] = 256
        request.expand.pending_siblings = pending
        gen = await backend.generate(request, "", WIDE_AT_ITS_OWN_SIZES, None)
        assert gen.code, gen.error
        seen.append(gen.tunables)
    rows = [t for t in seen if t["template"] == "matmul_row_epilogue"]
    assert rows and seen[0]["template"] == "general"
    for t in rows:
        bm, bk, stages = (int(t[k]) for k in ("BLOCK_M", "BLOCK_K", "num_stages"))
        assert (bm * bk + bk * 2048) * 4 * stages <= SHARED_MEMORY_BYTES, t


async def test_a_spec_that_cannot_be_traced_at_its_own_sizes_is_drafted_from_the_screening_trace(
        backend: OfflineBackend) -> None:
    """A spec whose inputs cannot be built at its own sizes in the generator (here it refuses
    them outright) still gets its template's draft, checked at the screening sizes as before,
    and the job's later expansions do not try that trace again."""
    source = WIDE_AT_ITS_OWN_SIZES.replace("    return [torch.randn(8, 64)]",
                                           "    assert n < 1024, 'too large here'\n    return [torch.randn(8, 64)]")
    traces: list[dict[str, int]] = []
    real = backend._worker.trace

    async def counted(src: str, sizes: dict[str, int], tenant: str = "default", meta_only: bool = False) -> dict:
        traces.append(dict(sizes))
        return await real(src, sizes, tenant, meta_only)

    backend._worker.trace = counted  # type: ignore[method-assign]
    for seed in range(2):
        request = _request(seed=seed)
        request.expand.cpu_sizes["n"] = 256
        gen = await backend.generate(request, "", source, None)
        assert gen.code and gen.tunables["template"] == "matmul_row_epilogue", gen.error
    assert traces == [{"n": 256}, {}]


def test_a_space_of_a_billion_points_is_sampled_not_listed() -> None:
    """The general lowering's space, every one-knob neighbour of the parent tried: the search
    goes on to untried points farther away, drawn at random, without listing the space (over
    a billion points: a template search whose every option had failed once tried to, and
    its process ran out of memory)."""
    import math

    space = search_space(REPO_ROOT / "kb")
    assert math.prod(len(v) for v in space.tunables.values()) > 10**8
    parent = {"template": "general", **space.defaults()}
    tried = [{**parent, k: v} for k, values in space.tunables.items() for v in values]
    request = _request(parent=parent, siblings=tried, category="slow")
    picks = [tun for _, tun in itertools.islice(preferences([space], request), 50)]
    assert len({tuple(sorted(t.items())) for t in picks}) == 50
    assert all(sum(t[k] != parent[k] for k in t) >= 2 for t in picks)
