"""Half-precision linear projection without bias applied to a (batch, seq, hidden) tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 16
seq_len = 2048
hidden = 2048
out_dim = 2048 * 3


class Model(nn.Module):
    def __init__(self, hidden, out_dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_dim, hidden, dtype=torch.float16) / hidden ** 0.5)

    def forward(self, x):
        return F.linear(x, self.weight)


def get_inputs():
    return [torch.randn(batch, seq_len, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden, out_dim]
