"""Converts NCHW to NHWC with permute + contiguous."""

import torch
import torch.nn as nn

batch_size = 32
channels = 256
height = width = 64


class Model(nn.Module):
    def forward(self, x):
        return x.permute(0, 2, 3, 1).contiguous()


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
