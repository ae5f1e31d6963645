import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(16, 32)
        self.g = nn.GroupNorm(4, 32)

    def forward(self, x):
        return self.g(self.l(x).transpose(1, 2)).transpose(1, 2)


def get_inputs():
    return [torch.randn(4, 10, 16)]


def get_init_inputs():
    return []
