import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.cat([torch.zeros_like(x[:, :1]), x], 1)[:, :-1].cumsum(1)


def get_inputs():
    return [torch.randn(8, 64)]


def get_init_inputs():
    return []
