"""ResNeXt block (cardinality 32, width 4): 1x1 conv, grouped 3x3 conv, 1x1 conv, BN after each, identity residual."""

import torch
import torch.nn as nn

batch_size = 32
channels = 256
cardinality = 32
base_width = 4
resolution = 56


class Model(nn.Module):
    def __init__(self, channels, cardinality, base_width):
        super().__init__()
        width = cardinality * base_width
        self.conv_reduce = nn.Conv2d(channels, width, 1, bias=False)
        self.bn_reduce = nn.BatchNorm2d(width)
        self.conv_conv = nn.Conv2d(width, width, 3, padding=1, groups=cardinality, bias=False)
        self.bn = nn.BatchNorm2d(width)
        self.conv_expand = nn.Conv2d(width, channels, 1, bias=False)
        self.bn_expand = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.bn_reduce(self.conv_reduce(x)))
        y = torch.relu(self.bn(self.conv_conv(y)))
        y = self.bn_expand(self.conv_expand(y))
        return torch.relu(x + y)


def get_inputs():
    return [torch.randn(batch_size, channels, resolution, resolution)]


def get_init_inputs():
    return [channels, cardinality, base_width]
