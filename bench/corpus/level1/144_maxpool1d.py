"""1D max pooling, kernel 4, stride 2, padding 1, dilation 2."""

import torch
import torch.nn as nn

batch_size = 64
mel_bins = 128
frames = 8192


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, mel_bins, frames)]


def get_init_inputs():
    return [4, 2, 1, 2]
