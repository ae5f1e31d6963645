"""Half-precision gated MLP: silu(x W1^T) * (x W3^T) then down projection W2."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 2048
dim = 2048
hidden_dim = 5632


class Model(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False, dtype=torch.float16)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False, dtype=torch.float16)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False, dtype=torch.float16)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim, dtype=torch.float16)]


def get_init_inputs():
    return [dim, hidden_dim]
