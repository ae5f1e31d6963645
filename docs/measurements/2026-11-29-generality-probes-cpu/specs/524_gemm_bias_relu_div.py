import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(16, 24, bias=False)
        self.bias = nn.Parameter(torch.randn(24))

    def forward(self, x, y=None):
        return torch.relu(self.l(x) + self.bias) / 2.0


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
