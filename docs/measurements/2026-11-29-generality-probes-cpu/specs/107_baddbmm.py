import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, c,a,b):
        return torch.baddbmm(c, a, b, beta=0.5, alpha=2.0)


def get_inputs():
    return [torch.randn(4, 8, 12), torch.randn(4, 8, 16), torch.randn(4, 16, 12)]


def get_init_inputs():
    return []
