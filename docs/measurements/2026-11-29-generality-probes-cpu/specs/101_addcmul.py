import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a,b,c):
        return torch.addcmul(a, b, c, value=0.3) + torch.addcdiv(a, b, c.abs() + 1, value=2)


def get_inputs():
    return [torch.randn(8, 16), torch.randn(8, 16), torch.randn(8, 16)]


def get_init_inputs():
    return []
