import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.Bilinear(8, 12, 6)

    def forward(self, a,b):
        return self.m(a, b)


def get_inputs():
    return [torch.randn(16, 8), torch.randn(16, 12)]


def get_init_inputs():
    return []
