import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.Conv3d(4, 8, 3, dilation=2, padding=2)

    def forward(self, x):
        return self.m(x)


def get_inputs():
    return [torch.randn(1, 4, 8, 8, 8)]


def get_init_inputs():
    return []
