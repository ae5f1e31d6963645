"""Style-transfer convolution: reflection pad, Conv2d, InstanceNorm2d (affine), ReLU."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = width = 256


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.block = nn.Sequential(
            nn.ReflectionPad2d(1),
            nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=2),
            nn.InstanceNorm2d(out_channels, affine=True),
            nn.ReLU(True),
        )

    def forward(self, x):
        return self.block(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
