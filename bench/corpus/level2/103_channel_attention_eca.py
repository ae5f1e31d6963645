"""Efficient channel attention: global average pool, 1D convolution across channels, sigmoid, channel rescale."""

import torch
import torch.nn as nn

batch_size = 64
channels = 1024
height = width = 14


class Model(nn.Module):
    def __init__(self, k_size=5):
        super().__init__()
        self.conv = nn.Conv1d(1, 1, kernel_size=k_size, padding=(k_size - 1) // 2, bias=False)

    def forward(self, x):
        y = x.mean(dim=(2, 3), keepdim=True)
        y = self.conv(y.squeeze(-1).transpose(-1, -2)).transpose(-1, -2).unsqueeze(-1)
        return x * torch.sigmoid(y)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
