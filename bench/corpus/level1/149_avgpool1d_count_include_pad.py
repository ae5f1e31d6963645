"""1D average pooling with padding, count_include_pad=False."""

import torch
import torch.nn as nn

batch_size = 128
channels = 64
length = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.avg = nn.AvgPool1d(kernel_size=5, stride=1, padding=2, count_include_pad=False)

    def forward(self, x):
        return self.avg(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []
