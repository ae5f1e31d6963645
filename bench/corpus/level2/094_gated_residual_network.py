"""Gated residual network: Linear, ELU, Linear, GLU gate, add skip, LayerNorm (tabular/time-series models)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
time_steps = 24
hidden = 256


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc1 = nn.Linear(hidden, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.gate = nn.Linear(hidden, 2 * hidden)
        self.norm = nn.LayerNorm(hidden)

    def forward(self, a):
        eta = self.fc2(F.elu(self.fc1(a)))
        return self.norm(a + F.glu(self.gate(eta), dim=-1))


def get_inputs():
    return [torch.randn(batch_size, time_steps, hidden)]


def get_init_inputs():
    return [hidden]
