"""Matmul with a bias + GELU epilogue, fp16 (M=8192, K=1024, N=4096).

Computes ``gelu(x @ W^T + b)`` (``nn.Linear`` then exact GELU): an MLP layer whose
epilogue a fused kernel applies on the accumulator instead of a second pass over the
output. Compute-bound at this size.

Minimal bytes moved: ``(M*K + N*K + M*N + N) * 2`` (x, W, out, bias in fp16).
FLOPs: ``2*M*N*K`` for the matmul plus ``9*M*N`` for bias add and GELU.
"""

import torch
import torch.nn as nn

family = "operator: matmul + bias + GELU epilogue"
m = 8192
k = 1024
n = 4096

cpu_shapes = {"m": 32, "k": 64, "n": 48}
test_cases = [{"name": "skinny", "sizes": {"m": 512, "k": 1024, "n": 4096}}]


class Model(nn.Module):
    def __init__(self, k: int, n: int) -> None:
        super().__init__()
        self.linear = nn.Linear(k, n)
        with torch.no_grad():
            self.linear.bias.copy_(torch.randn(n) * 0.5)
        self.linear.half()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.linear(x))


def get_inputs() -> list[torch.Tensor]:
    return [(torch.randn(m, k) + 0.1).to(torch.float16)]


def get_init_inputs() -> list[object]:
    return [k, n]


def bytes_moved() -> int:
    return (m * k + n * k + m * n + n) * 2


def flops() -> int:
    return 2 * m * n * k + 9 * m * n
