"""Sliding windows of length 64 with step 16 along the time axis via Tensor.unfold."""

import torch
import torch.nn as nn

batch_size = 128
channels = 64
length = 16384
window = 64
step = 16


class Model(nn.Module):
    def __init__(self, window, step):
        super().__init__()
        self.window = window
        self.step = step

    def forward(self, x):
        return x.unfold(2, self.window, self.step).contiguous()


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [window, step]
