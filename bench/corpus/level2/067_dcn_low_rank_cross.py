"""Low-rank cross layer: x0 * (U (V^T x) + b) + x with rank 256, in bfloat16."""

import torch
import torch.nn as nn

batch_size = 32768
input_dim = 2048
rank = 256


class Model(nn.Module):
    def __init__(self, input_dim, rank):
        super().__init__()
        self.V = nn.Linear(input_dim, rank, bias=False, dtype=torch.bfloat16)
        self.U = nn.Linear(rank, input_dim, dtype=torch.bfloat16)

    def forward(self, x0, x):
        return x0 * self.U(self.V(x)) + x


def get_inputs():
    x0 = torch.randn(batch_size, input_dim, dtype=torch.bfloat16)
    return [x0, x0.clone()]


def get_init_inputs():
    return [input_dim, rank]
