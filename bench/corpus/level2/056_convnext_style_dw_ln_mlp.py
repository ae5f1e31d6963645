"""Depthwise 7x7 Conv2d, channels-last LayerNorm, pointwise MLP with GELU, layer scale, residual."""

import torch
import torch.nn as nn

batch_size = 32
dim = 192
height = width = 56


class Model(nn.Module):
    def __init__(self, dim, layer_scale_init=1e-6):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(layer_scale_init * torch.ones(dim))

    def forward(self, x):
        shortcut = x
        x = self.dwconv(x).permute(0, 2, 3, 1)
        x = self.pwconv2(self.act(self.pwconv1(self.norm(x))))
        x = (self.gamma * x).permute(0, 3, 1, 2)
        return shortcut + x


def get_inputs():
    return [torch.randn(batch_size, dim, height, width)]


def get_init_inputs():
    return [dim]
