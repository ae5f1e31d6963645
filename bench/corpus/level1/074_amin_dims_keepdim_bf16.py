"""Minimum over dimensions 1 and 3 of a bfloat16 4D tensor, keepdim."""

import torch
import torch.nn as nn

batch_size = 16
channels = 256
height = 128
width = 256


class Model(nn.Module):
    def forward(self, x):
        return x.amin(dim=(1, 3), keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
