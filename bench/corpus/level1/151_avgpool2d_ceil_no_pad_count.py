"""2D average pooling with ceil_mode, padding 1 and count_include_pad=False, on half-precision maps."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 192
height = width = 35


class Model(nn.Module):
    def forward(self, x):
        return F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width).half()]


def get_init_inputs():
    return []
