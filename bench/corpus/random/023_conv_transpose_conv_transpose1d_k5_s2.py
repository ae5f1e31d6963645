"""nn.ConvTranspose1d kernel 5, stride 2, padding 2, output_padding 1, dilation 2, groups 4, float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 53
in_channels = 64
out_channels = 32
length = 512


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose1d(in_channels, out_channels, 5, stride=2, padding=2,
                                       output_padding=1, groups=4, bias=False,
                                       dilation=2, dtype=torch.float32)

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length, dtype=torch.float32)]


def get_init_inputs():
    return [in_channels, out_channels]
