"""2D max pooling with ceil_mode=True on odd-sized maps, 2x2 window, stride 2."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 256
height = 55
width = 55


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, kernel_size=2, stride=2, ceil_mode=True)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
