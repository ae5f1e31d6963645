import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(16, 24)
        self.scale = nn.Parameter(torch.randn(24))
        self.b = nn.BatchNorm1d(24)

    def forward(self, x, y=None):
        return self.b(self.l(x) * self.scale)


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
