import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a,b):
        return torch.outer(a, b) + torch.kron(a[:4], b[:4]).view(1, 16).expand(8, 16)[:, :1]


def get_inputs():
    return [torch.randn(8), torch.randn(16)]


def get_init_inputs():
    return []
