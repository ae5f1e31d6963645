"""Reductions over any dims and data movement (views, copies) through the general lowering."""

from __future__ import annotations

import pytest
from lowering_check import check

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Model(nn.Module):\n"


def _spec(expr: str, inputs: str, args: str = "x") -> str:
    return (HEAD + f"    def forward(self, {args}):\n        return {expr}\n\n\n"
            f"def get_inputs():\n    return [{inputs}]\n\n\ndef get_init_inputs():\n    return []\n")


REDUCTIONS = {
    "sum_dim1": "x.sum(1)", "sum_keep_neg": "x.sum(-1, keepdim=True)", "sum_two_dims": "x.sum((0, 2))",
    "mean_all": "x.mean()", "mean_dims_keep": "x.mean((1, 2), keepdim=True)", "prod": "(x * 0.5 + 1).prod(1)",
    "amax_dims": "x.amax((0, 2))", "amin": "x.amin(-1)", "max_values": "x.max(dim=1).values",
    "max_indices": "x.max(dim=1)[1]", "min_both": "torch.cat([x.min(dim=2)[0], x.min(dim=2)[1].float()], 1)",
    "var_unbiased": "x.var(1)", "var_pop": "x.var((0, 2), correction=0)", "std_keep": "x.std(2, keepdim=True)",
    "var_mean": "torch.stack(torch.var_mean(x, dim=1))", "any_all": "torch.stack([(x > 1).any(1), (x > -3).all(1)])",
    "logsumexp": "torch.logsumexp(x, 2)", "norm2": "x.norm(dim=1)", "norm1": "torch.linalg.vector_norm(x, 1, dim=2)",
    "norm_inf": "torch.linalg.vector_norm(x, float('inf'), dim=(1, 2))", "fro": "torch.norm(x)",
    "count_nonzero": "torch.count_nonzero(x > 0, dim=1)", "softmax0": "torch.softmax(x, 0)",
    "softmax1": "F.softmax(x, dim=1)", "log_softmax_last": "F.log_softmax(x, -1)",
    "argmax_all": "x.argmax()", "argmin_keep": "x.argmin(1, keepdim=True)", "cosine": "F.cosine_similarity(x, x.flip(0), dim=2)",
    "normalize": "F.normalize(x, dim=1)", "l1_normalize": "x / x.abs().sum(-1, keepdim=True)",
}
MOVES = {
    "permute": "x.permute(2, 0, 1).contiguous()", "reshape_chain": "x.reshape(6, -1).t().reshape(5, 4, 3)",
    "transpose_view": "x.transpose(1, 2).contiguous().view(3, -1)", "flatten": "x.flatten(1)",
    "unflatten": "x.flatten(1).unflatten(1, (4, 5))", "movedim": "torch.movedim(x, 0, -1)",
    "split": "torch.cat(x.split(2, dim=2)[::-1], 2)", "chunk": "x.chunk(2, dim=1)[1]",
    "stack": "torch.stack([x, x * 2], dim=1)", "narrow": "x.narrow(2, 1, 3)", "expand": "x[:, :1].expand(-1, 4, -1)",
    "repeat": "x.repeat(1, 2, 1)", "tile": "torch.tile(x, (2, 1, 1))", "diagonal": "torch.diagonal(x, 0, 1, 2)",
    "diag_embed": "torch.diag_embed(x[:, 0])", "triu_k": "torch.triu(x, diagonal=1)", "tril_k": "torch.tril(x, -1)",
    "unfold": "x.unfold(2, 2, 1)", "index_slices": "x[1:, ::2, -2:]", "select": "x[:, 2]", "squeeze": "x[:, :1].squeeze(1)",
    "unsqueeze": "x.unsqueeze(0).unsqueeze(-1)", "einsum": "torch.einsum('bij,bkj->bik', x, x)",
    "pixel_shuffle": "F.pixel_shuffle(x.reshape(3, 4, 5, 1).repeat(1, 1, 1, 1), 2)",
    "flip_multi": "x.flip((0, 2))", "roll_multi": "torch.roll(x, (1, -2), (1, 2))", "pad_reflect": "F.pad(x, (1, 2), mode='reflect')",
    "pad_replicate": "F.pad(x, (2, 1), mode='replicate')", "pad_circular": "F.pad(x, (1, 1), mode='circular')",
    "zeros_like_add": "torch.zeros_like(x) + torch.ones(1, 4, 1)", "arange_bcast": "x + torch.arange(5).float()",
    "type_as": "x.int().type_as(x)", "masked_fill": "x.masked_fill(x > 0.5, -1.0)",
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name: str) -> None:
    check(_spec(REDUCTIONS[name], "torch.randn(3, 4, 5)"), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(MOVES))
def test_data_movement(name: str) -> None:
    check(_spec(MOVES[name], "torch.randn(3, 4, 5)"))


def test_big_reduction_loops_over_chunks() -> None:
    check(_spec("x.sum(1) + x.amax(1)", "torch.randn(3, 20000)"), atol=1e-3, rtol=1e-4)
