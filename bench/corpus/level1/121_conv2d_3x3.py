"""Standard 2D convolution, 3x3 kernel, padding 1, with bias."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = width = 224
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int) -> None:
        super().__init__()
        self.body = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
