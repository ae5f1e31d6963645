"""Gated convolution: Conv1d to 2C channels, GLU over channels, dropout (eval), residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 512
length = 1024


class Model(nn.Module):
    def __init__(self, channels, kernel_size=3):
        super().__init__()
        self.conv = nn.Conv1d(channels, 2 * channels, kernel_size, padding=1)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return x + self.dropout(F.glu(self.conv(x), dim=1))


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels]
