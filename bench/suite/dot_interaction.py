"""DLRM dot interaction: pairwise dot products of feature embeddings, fp16 (B=8192, N=27, D=128).

Computes ``Z = X @ X^T`` per example for X [batch, features, dim] and returns the strict
upper triangle of Z flattened, [batch, features*(features-1)/2]: the feature-interaction
layer of DLRM. Eager PyTorch writes the full N x N matrix and gathers from it; a fused
kernel writes only the triangle.

Minimal bytes moved: ``batch * (features*dim + features*(features-1)/2) * 2``.
FLOPs: ``2 * batch * features*(features-1)/2 * dim`` (only the needed dot products).
"""

import torch
import torch.nn as nn

family = "fusion: DLRM dot interaction"
batch = 8192
features = 27
dim = 128

cpu_shapes = {"batch": 4, "features": 9, "dim": 16}


class Model(nn.Module):
    def __init__(self, features: int) -> None:
        super().__init__()
        rows, cols = torch.triu_indices(features, features, offset=1)
        self.register_buffer("rows", rows, persistent=False)
        self.register_buffer("cols", cols, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = torch.bmm(x, x.transpose(1, 2))
        return z[:, self.rows, self.cols]


def get_inputs() -> list[torch.Tensor]:
    return [(torch.randn(batch, features, dim) / dim ** 0.25 + 0.05).to(torch.float16)]


def get_init_inputs() -> list[object]:
    return [features]


def bytes_moved() -> int:
    return batch * (features * dim + features * (features - 1) // 2) * 2


def flops() -> int:
    return 2 * batch * (features * (features - 1) // 2) * dim
