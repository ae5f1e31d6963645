"""1D convolution with bias, kernel 5, no padding."""

import torch
import torch.nn as nn

batch_size = 64
in_channels = 128
out_channels = 256
kernel_size = 5
length = 4096


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.feature_extractor = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return self.feature_extractor(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
