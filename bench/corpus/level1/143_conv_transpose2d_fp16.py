"""Half-precision transposed 2D convolution, kernel 4, stride 2, padding 1 (GAN generator upsampling)."""

import torch
import torch.nn as nn

batch_size = 64
in_channels = 256
out_channels = 128
height = width = 32


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, out_channels, 4, 2, 1, bias=False, dtype=torch.float16)

    def forward(self, z):
        return self.up(z)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return [in_channels, out_channels]
