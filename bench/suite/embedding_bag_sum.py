"""Embedding-bag sum: gather rows of a table and sum each bag, fp32 (1M x 128 table).

Computes ``table[indices].sum(dim=1)`` for indices [batch, bag] into table
[num_embeddings, dim]: sum-pooled sparse features, the core lookup of DLRM-style models.
Indices are valid (in [0, num_embeddings)) and repeat with a skew, as real ids do.

Minimal bytes moved: the gathered rows ``batch*bag*dim*4`` (the table itself is never
read in full), the indices ``batch*bag*8`` and the output ``batch*dim*4``.
FLOPs: ``batch * bag * dim`` (one add per gathered element).
"""

import torch
import torch.nn as nn

family = "fusion: embedding-bag gather + sum"
num_embeddings = 1000000
dim = 128
batch = 16384
bag = 32

cpu_shapes = {"num_embeddings": 5000, "dim": 32, "batch": 16, "bag": 8}


class Model(nn.Module):
    def __init__(self, num_embeddings: int, dim: int) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.randn(num_embeddings, dim) * 0.1)

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        return self.table[indices].sum(dim=1)


def get_inputs() -> list[torch.Tensor]:
    # Squaring a uniform skews ids toward small values (hot rows), like real id traffic.
    u = torch.rand(batch, bag)
    indices = (u * u * num_embeddings).long().clamp_(0, num_embeddings - 1)
    return [indices]


def get_init_inputs() -> list[object]:
    return [num_embeddings, dim]


def bytes_moved() -> int:
    return batch * bag * dim * 4 + batch * bag * 8 + batch * dim * 4


def flops() -> int:
    return batch * bag * dim
