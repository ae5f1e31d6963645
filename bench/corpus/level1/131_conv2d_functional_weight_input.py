"""F.conv2d where both the input and the filter bank are forward arguments (stride 2, padding 1)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 64
out_channels = 64
height = width = 96


class Model(nn.Module):
    def forward(self, x, weight, bias):
        return F.conv2d(x, weight, bias, stride=2, padding=1)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    weight = torch.randn(out_channels, in_channels, 3, 3) * 0.05
    bias = torch.randn(out_channels)
    return [x, weight, bias]


def get_init_inputs():
    return []
