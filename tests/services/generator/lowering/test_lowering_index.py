"""The general lowering on indexing: gathers, advanced indexing, the scatter family,
embedding bags and searches, against PyTorch's own results; and the operators it refuses.

Plain scatters (scatter, index_put without accumulate) get distinct target indices, since
with duplicates PyTorch leaves whichever write came last; accumulating ones get duplicates.
"""

from __future__ import annotations

import pytest
from lowering_check import check, generate

from services.generator.lowering import Unsupported

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def spec(forward: str, inputs: str, init: str = "", init_args: str = "", init_values: str = "") -> str:
    body = f"    def __init__(self{', ' + init_args if init_args else ''}):\n        super().__init__()\n"
    body += "".join(f"        {line}\n" for line in init.strip().splitlines()) if init else ""
    fwd = "".join(f"        {line}\n" for line in forward.strip().splitlines())
    return (HEAD + "\n\nclass Model(nn.Module):\n" + body + "    def forward(self, *xs):\n" + fwd
            + f"\n\ndef get_inputs():\n    return [{inputs}]\n\ndef get_init_inputs():\n    return [{init_values}]\n")


VALUES = {
    "float32": "torch.randn(4, 5, 6)",
    "int64": "torch.randint(-9, 9, (4, 5, 6))",
    "float16": "torch.randn(4, 5, 6).half()",
}


@pytest.mark.parametrize("dtype", sorted(VALUES))
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_gather_and_index_select_along_each_dim(dtype: str, dim: int) -> None:
    forward = f"""
x, t = xs
n = x.shape[{dim}]
shape = [3, 4, 5]
return x.gather({dim}, t[:3, :4, :5] % n), x.index_select({dim}, t[0, 0] % n), torch.take_along_dim(x, t[:1] % n, {dim})
"""
    check(spec(forward, f"{VALUES[dtype]}, torch.randint(0, 30, (4, 5, 6))"))


def test_roll_one_hot_and_embedding() -> None:
    forward = """
x, t = xs
return (torch.roll(x, 2, 0), torch.roll(x, (-1, 3), (0, 1)), F.one_hot(t % 7, 7), F.embedding(t % 10, x),
        self.emb(t % 10), F.embedding(t % 10, x.half()))
"""
    check(spec(forward, "torch.randn(10, 6), torch.randint(0, 50, (3, 4))", init="self.emb = nn.Embedding(10, 5)"),
          atol=1e-3, rtol=1e-3)


ADVANCED = [
    "x[t % 4]",                      # one index, leading dimension
    "x[:, t % 5]",                   # in the middle
    "x[t % 4, :, t % 6]",            # non-adjacent: the broadcast dimensions come first
    "x[:, t % 5, t % 6]",            # adjacent: they stay in place
    "x[t[:, :1] % 4, t[0] % 5]",     # broadcast together
    "x[None, t % 4, ..., None]",     # None entries and an ellipsis
    "x[t % 4 - 4, 1:4]",             # negative indices wrap, then a slice
    "x[(t % 4)[None], :, (t % 6)[:, None, :1]]",
    "x.flatten()[t]",                # take
]


@pytest.mark.parametrize("expr", ADVANCED)
def test_advanced_indexing(expr: str) -> None:
    check(spec(f"x, t = xs\nreturn {expr}", "torch.randn(4, 5, 6), torch.randint(0, 20, (2, 3))"))


def test_losses_gather_their_targets() -> None:
    forward = """
x, t, w = xs
return (F.cross_entropy(x, t), F.cross_entropy(x, t, weight=w, ignore_index=2),
        F.cross_entropy(x, t, label_smoothing=0.1, reduction='sum'),
        F.nll_loss(F.log_softmax(x, 1), t, reduction='none'), F.nll_loss(F.log_softmax(x, 1), t, ignore_index=1))
"""
    check(spec(forward, "torch.randn(8, 6), torch.randint(0, 6, (8,)), torch.rand(6)"))


def test_searchsorted_and_bucketize_both_sides() -> None:
    forward = """
x, v = xs
s = torch.sort(x, 1)[0]
edges = torch.tensor([-1.0, 0.0, 0.0, 0.5])
return (torch.searchsorted(s, v), torch.searchsorted(s, v, right=True), torch.searchsorted(s[0], v),
        torch.searchsorted(s[0], v, side="right", out_int32=True), torch.bucketize(v, edges),
        torch.bucketize(v, edges, right=True), torch.bucketize(v, edges, out_int32=True), torch.bucketize(0.0, edges),
        torch.searchsorted(x, v, sorter=torch.argsort(x, 1)))
"""
    check(spec(forward, "torch.randn(3, 9), torch.cat([torch.randn(3, 4), torch.zeros(3, 1)], 1)"))


SCATTER_VALUES = {
    "float32": ("torch.randn(4, 6)", "torch.randn(4, 6)"),
    "int64": ("torch.randint(-9, 9, (4, 6))", "torch.randint(-9, 9, (4, 6))"),
    "float16": ("torch.randn(4, 6).half()", "torch.randn(4, 6).half()"),
}


@pytest.mark.parametrize("dtype", sorted(SCATTER_VALUES))
def test_scatter_and_scatter_add(dtype: str) -> None:
    """Distinct targets per row for scatter (argsort of random keys), duplicates for add."""
    forward = """
x, s, keys, t = xs
distinct = torch.argsort(keys, 1)[:, :4]
return (x.scatter(1, distinct, s), x.scatter(0, torch.argsort(keys[:, :3], 0), 2), x.scatter_add(1, t, s),
        x.scatter_add(0, t % 4, s), x.scatter(1, distinct, s, reduce="add"))
"""
    base, src = SCATTER_VALUES[dtype]
    tol = 1e-2 if dtype == "float16" else 1e-5
    check(spec(forward, f"{base}, {src}, torch.rand(4, 6), torch.randint(0, 6, (4, 6))"), atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_every_reduction(dtype: str, include_self: bool) -> None:
    forward = f"""
x, s, t = xs
return tuple(x.scatter_reduce(d, t[:, :5] % x.shape[d], s[:, :5], r, include_self={include_self})
             for d in (0, 1) for r in ("sum", "prod", "mean", "amax", "amin"))
"""
    base, src = SCATTER_VALUES[dtype]
    check(spec(forward, f"{base}, {src}, torch.randint(0, 12, (4, 6))"))


def test_scatter_reduce_max_min_propagate_nan() -> None:
    forward = """
x, s, t = xs
s = torch.where(s > 1.0, float("nan"), s)
x = torch.where(x > 1.5, float("nan"), x)
return tuple(x.scatter_reduce(1, t, s, r, include_self=i) for r in ("amax", "amin") for i in (True, False))
"""
    check(spec(forward, "torch.randn(4, 6), torch.randn(4, 6), torch.randint(0, 6, (4, 6))"))


@pytest.mark.parametrize("dtype", sorted(SCATTER_VALUES))
def test_index_put_index_add_with_duplicates(dtype: str) -> None:
    forward = """
def add_columns(x, cols, v):
    y = x.clone()
    y[:, cols] += v
    return y
x, s, t, perm = xs
rows, cols = t[0] % 4, t[1] % 6
return (x.index_put((rows,), s[:5], accumulate=True), x.index_put((rows, cols), s[0, :5], accumulate=True),
        x.index_put((perm[:3],), s[:3]), x.index_put((perm[:3], cols[:3]), s[0, :3]),
        x.index_add(0, rows, s[:5]), x.index_add(1, cols, s[:4, :5].t().contiguous().t(), alpha=3),
        add_columns(x, perm[:3], s[:4, :3]))
"""
    base = SCATTER_VALUES[dtype][0]
    src = {"float32": "torch.randn(5, 6)", "int64": "torch.randint(-9, 9, (5, 6))",
           "float16": "torch.randn(5, 6).half()"}[dtype]
    tol = 1e-2 if dtype == "float16" else 1e-5
    check(spec(forward, f"{base}, {src}, torch.randint(-12, 12, (2, 5)), torch.randperm(4)"), atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_index_reduce_and_masked_scatter(dtype: str) -> None:
    """index_reduce is a scatter_reduce along one dim; masked_scatter takes the source's
    elements in order through a running count of the mask."""
    forward = """
x, s, t = xs
return (*(x.index_reduce(d, t[:4] % x.shape[d], s[:4, :6] if d == 0 else s[:4, :4], r, include_self=i)
          for d in (0, 1) for r in ("prod", "mean", "amax", "amin") for i in (True, False)),
        x.masked_scatter(x > 0, s), x.masked_scatter(x[0] > 0, s))
"""
    base, src = SCATTER_VALUES[dtype]
    check(spec(forward, f"{base}, {src.replace('(4, 6)', '(5, 6)')}, torch.randint(0, 12, (5,))"))


def test_masked_assignment_index_fill_and_index_copy() -> None:
    """x[mask] = v is an index_put with a boolean mask and one value: a where."""
    forward = """
x = xs[0].clone()
x[x < 0] = 0.5
y = xs[0].clone()
y[:, y[0] > 0] = -2.0
return x, y, xs[0].index_fill(1, torch.tensor([0, 2]), 3.0), xs[0].index_copy(0, torch.tensor([2, 0]), xs[0][:2] * 2)
"""
    check(spec(forward, "torch.randn(4, 6)"))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_modes(mode: str) -> None:
    """Empty bags, padding entries, NaN rows (max takes a bag's first row whatever it is)."""
    forward = f"""
w, t, o = xs
w = torch.where(w > 1.8, float("nan"), w) if "{mode}" == "max" else w
return (F.embedding_bag(t, w, o, mode="{mode}"), F.embedding_bag(t, w, o, mode="{mode}", padding_idx=3),
        F.embedding_bag(t[:12], w, torch.cat([o, torch.tensor([12])]), mode="{mode}", include_last_offset=True),
        F.embedding_bag(t[:12].view(3, 4), w, mode="{mode}"),
        *torch.ops.aten._embedding_bag(w, t, o, False, {("sum", "mean", "max").index(mode)}, False, None, False, 3))
"""
    check(spec(forward, "torch.randn(10, 6), torch.randint(0, 10, (14,)), torch.tensor([0, 3, 3, 7, 11])"))


@pytest.mark.parametrize("form", ["interpreter", "gpu"])
def test_embedding_bags_of_many_bags_share_interpreted_programs(form: str) -> None:
    """Under the interpreter a program walks many bags at once, each lane its own bag (bags
    of different lengths, empty ones and padding included); the GPU's form, a bag per
    program, computes the same."""
    forward = """
w, t, o, p = xs
return (F.embedding_bag(t, w, o, mode="mean", padding_idx=3), F.embedding_bag(t, w, o, mode="max"),
        F.embedding_bag(t, w, o, mode="sum", per_sample_weights=p))
"""
    code = check(spec(forward, "torch.randn(50, 6), torch.randint(0, 50, (300,)), "
                               "torch.sort(torch.randint(0, 300, (97,))).values.index_fill(0, torch.tensor([0]), 0), "
                               "torch.rand(300)"), form=form)
    assert "_embedding_bag_i[" in code and "BLOCK_B=" in code


def test_a_view_of_a_slice_starts_where_the_slice_does() -> None:
    """``ids[i]`` of a 3-d index tensor, read by embedding bags, is an ``as_strided`` view that
    starts at the slice's own storage offset (reading from 0 read another table's ids)."""
    init = """
self.bags = nn.ModuleList([nn.EmbeddingBag(20, 4, mode="mean") for _ in range(3)])
"""
    forward = "return torch.cat([b(xs[0][i]) for i, b in enumerate(self.bags)], dim=1)"
    check(spec(forward, "torch.randint(0, 20, (3, 6, 5))", init=init))


def test_embedding_bag_per_sample_weights() -> None:
    forward = """
w, t, o, p = xs
return F.embedding_bag(t, w, o, mode="sum", per_sample_weights=p), F.embedding_bag(t, w.half(), o).float()
"""
    check(spec(forward, "torch.randn(10, 6), torch.randint(0, 10, (9,)), torch.tensor([0, 2, 2, 5]), torch.rand(9)"),
          atol=1e-2, rtol=1e-2)


def test_recommendation_block() -> None:
    """Sparse features through embedding bags, dense ones through a linear layer, a dot
    interaction and a top layer (a DLRM-style block)."""
    init = """
self.bags = nn.ModuleList([nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(2)])
self.bottom = nn.Linear(13, dim)
self.top = nn.Linear(dim + 3, 1)
"""
    forward = """
dense, idx0, off0, idx1, off1 = xs
d = torch.relu(self.bottom(dense))
e0 = self.bags[0](idx0, off0)
e1 = self.bags[1](idx1, off1)
feats = torch.stack([d, e0, e1], 1)
inter = torch.bmm(feats, feats.transpose(1, 2))
pairs = inter[:, [1, 2, 2], [0, 0, 1]]
return torch.sigmoid(self.top(torch.cat([d, pairs], 1)))
"""
    inputs = ("torch.randn(4, 13), torch.randint(0, 20, (10,)), torch.tensor([0, 2, 5, 7]), "
              "torch.randint(0, 20, (6,)), torch.tensor([0, 1, 3, 3])")
    check(spec(forward, inputs, init=init, init_args="rows, dim", init_values="20, 8"))


REFUSED = {
    "x[x > 0]": "boolean mask",
    "torch.nonzero(x)": "nonzero",
    "torch.masked_select(x, x > 0)": "masked_select",
    "torch.unique(x)": "unique",
    "torch.bincount((x.abs() * 3).long().flatten())": "bincount",
}


@pytest.mark.parametrize("expr", sorted(REFUSED))
def test_data_dependent_sizes_are_refused_by_name(expr: str) -> None:
    with pytest.raises(Unsupported, match=REFUSED[expr]) as info:
        generate(spec(f"x = xs[0]\nreturn {expr}", "torch.randn(4, 6)"))
    assert "depends on the input's values" in str(info.value)
