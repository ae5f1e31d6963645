"""Neural vocoder upsampling stage: LeakyReLU(0.1), ConvTranspose1d (kernel 16, stride 8), then a residual dilated Conv1d."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 512
out_channels = 256
frames = 512


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, rate=8):
        super().__init__()
        self.up = nn.ConvTranspose1d(in_channels, out_channels, 2 * rate, stride=rate, padding=rate // 2)
        self.res = nn.Conv1d(out_channels, out_channels, 3, dilation=3, padding=3)

    def forward(self, x):
        x = self.up(F.leaky_relu(x, 0.1))
        return x + self.res(F.leaky_relu(x, 0.1))


def get_inputs():
    return [torch.randn(batch_size, in_channels, frames)]


def get_init_inputs():
    return [in_channels, out_channels]
