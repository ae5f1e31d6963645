import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return torch.renorm(x, 2, 0, 1.0) + F.normalize(x, dim=1)


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
