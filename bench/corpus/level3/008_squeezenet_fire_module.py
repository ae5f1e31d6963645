"""SqueezeNet fire module: 1x1 squeeze conv + ReLU, parallel 1x1 and 3x3 expand convs + ReLU, concatenated."""

import torch
import torch.nn as nn

batch_size = 64
in_channels = 256
squeeze_channels = 48
expand1x1_channels = 192
expand3x3_channels = 192
height = width = 27


class Model(nn.Module):
    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super().__init__()
        self.squeeze = nn.Conv2d(in_channels, squeeze_channels, kernel_size=1)
        self.expand1x1 = nn.Conv2d(squeeze_channels, expand1x1_channels, kernel_size=1)
        self.expand3x3 = nn.Conv2d(squeeze_channels, expand3x3_channels, kernel_size=3, padding=1)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.act(self.squeeze(x))
        return torch.cat([self.act(self.expand1x1(x)), self.act(self.expand3x3(x))], 1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels]
