"""Linear followed by x * tanh(softplus(x)) written out and a final multiply by a learned gate."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_dim = 768
out_dim = 3072


class Model(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.fc = nn.Linear(in_dim, out_dim)
        self.gate = nn.Parameter(torch.rand(out_dim))

    def forward(self, x):
        h = self.fc(x)
        h = h * torch.tanh(F.softplus(h))
        return h * self.gate


def get_inputs():
    return [torch.randn(batch_size, in_dim)]


def get_init_inputs():
    return [in_dim, out_dim]
