"""Gated convolution unit: two parallel 1D convolutions, BatchNorm1d on each, tanh(a) * sigmoid(b), residual."""

import torch
import torch.nn as nn

batch_size = 32
channels = 256
length = 4096


class Model(nn.Module):
    def __init__(self, channels, kernel_size=3, dilation=2):
        super().__init__()
        pad = dilation * (kernel_size - 1) // 2
        self.filter_conv = nn.Conv1d(channels, channels, kernel_size, dilation=dilation, padding=pad)
        self.gate_conv = nn.Conv1d(channels, channels, kernel_size, dilation=dilation, padding=pad)
        self.bn_f = nn.BatchNorm1d(channels)
        self.bn_g = nn.BatchNorm1d(channels)

    def forward(self, x):
        a = torch.tanh(self.bn_f(self.filter_conv(x)))
        b = torch.sigmoid(self.bn_g(self.gate_conv(x)))
        return x + a * b


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels]
