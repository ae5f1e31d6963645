import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.RMSNorm(32)

    def forward(self, x):
        return self.m(x)


def get_inputs():
    return [torch.randn(4, 16, 32)]


def get_init_inputs():
    return []
