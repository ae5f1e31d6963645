"""Decoder upsampling: ConvTranspose2d (3, stride 2, pad 1, output_padding 1), GroupNorm, SiLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 512
out_channels = 256
height = width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups=32):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)

    def forward(self, x):
        return F.silu(self.norm(self.deconv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
