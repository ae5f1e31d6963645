"""Half-precision x @ W^T + b followed by clamp to [-1, 1] and scaling by 127."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 8192
K = 4096
N = 4096


class Model(nn.Module):
    def __init__(self, K, N):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(N, K, dtype=torch.float16) / K ** 0.5)
        self.bias = nn.Parameter(torch.randn(N, dtype=torch.float16) * 0.1)

    def forward(self, x):
        y = F.linear(x, self.weight, self.bias)
        return y.clamp(-1.0, 1.0) * 127.0


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16)]


def get_init_inputs():
    return [K, N]
