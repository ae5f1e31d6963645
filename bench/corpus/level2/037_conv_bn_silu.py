"""Detector building block: Conv2d (no bias), BatchNorm2d (eps 1e-3), SiLU."""

import torch
import torch.nn as nn

batch_size = 32
c1 = 128
c2 = 256
height = width = 80


class Model(nn.Module):
    def __init__(self, c1, c2, k=3, s=2):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2, eps=1e-3, momentum=0.03)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, c1, height, width)]


def get_init_inputs():
    return [c1, c2]
