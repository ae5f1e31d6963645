"""Adaptive average pooling to a 7x7 grid from a map whose size is not a multiple of 7."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 512
height = 30
width = 45


class Model(nn.Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self.output_size)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [(7, 7)]
