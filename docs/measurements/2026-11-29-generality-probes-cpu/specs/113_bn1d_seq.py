import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.b = nn.BatchNorm1d(16)

    def forward(self, x):
        return self.b(x)


def get_inputs():
    return [torch.randn(4, 16, 10)]


def get_init_inputs():
    return []
