"""WuKong optimized factorization machine: X . (X^T Y), fp16 (B=2048, N=64, D=256, K=32).

Computes ``out = X @ (X^T @ Y)`` per example with X [B, N, D] (N embeddings of width D)
and Y [B, N, K] (a K-column projection of the same embeddings). Associating as
X (X^T Y) avoids the N x N interaction matrix; with N <= 64 one example's X fits on chip,
so a fused kernel reads X once for both products.

Minimal bytes moved: ``B * (N*D + 2*N*K) * 2`` (X, Y, out in fp16).
FLOPs: ``4 * B * N * D * K`` (two matmuls of 2*N*D*K each).
"""

import torch
import torch.nn as nn

family = "fusion: WuKong FM X(X^T Y)"
batch = 2048
n = 64
d = 256
k = 32

cpu_shapes = {"batch": 3, "n": 16, "d": 32, "k": 8}
test_cases = [{"name": "few_embeddings", "sizes": {"batch": 4096, "n": 16, "d": 256, "k": 32}}]


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.bmm(x, torch.bmm(x.transpose(1, 2), y))


def get_inputs() -> list[torch.Tensor]:
    # Scaled so the N*D-term sums stay well inside fp16 range.
    x = (torch.randn(batch, n, d) / d ** 0.5 + 0.01).to(torch.float16)
    y = (torch.randn(batch, n, k) * 0.5 - 0.05).to(torch.float16)
    return [x, y]


def get_init_inputs() -> list[object]:
    return []


def bytes_moved() -> int:
    return batch * (n * d + 2 * n * k) * 2


def flops() -> int:
    return 4 * batch * n * d * k
