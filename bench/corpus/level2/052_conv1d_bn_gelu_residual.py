"""Temporal block: Conv1d (k=5, same padding), BatchNorm1d, GELU, residual add."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 256
seq_len = 2048


class Model(nn.Module):
    def __init__(self, channels, kernel_size=5):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, padding=kernel_size // 2)
        self.bn = nn.BatchNorm1d(channels)

    def forward(self, x):
        return x + F.gelu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs():
    return [channels]
