"""softplus activation on a 3D float32 tensor (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 48
seq_len = 566
hidden = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Softplus(beta=2.0, threshold=10.0)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden, dtype=torch.float32) * 3]


def get_init_inputs():
    return []
