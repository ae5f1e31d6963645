import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.InstanceNorm2d(16, affine=True)

    def forward(self, x):
        return self.m(x)


def get_inputs():
    return [torch.randn(2, 16, 8, 8)]


def get_init_inputs():
    return []
