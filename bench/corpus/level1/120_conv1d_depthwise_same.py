"""Depthwise 1D convolution (groups = channels) with padding='same', kernel 7."""

import torch
import torch.nn as nn

batch_size = 16
channels = 512
seq_len = 2048
kernel_size = 7


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.dwconv = nn.Conv1d(channels, channels, kernel_size, padding="same", groups=channels)

    def forward(self, x):
        return self.dwconv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs():
    return [channels, kernel_size]
