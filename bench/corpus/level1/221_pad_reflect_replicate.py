"""Reflect padding by 3 then replicate padding by 1 on both spatial dimensions."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 32
height = width = 256


class Model(nn.Module):
    def forward(self, x):
        x = F.pad(x, (3, 3, 3, 3), mode="reflect")
        return F.pad(x, (1, 1, 1, 1), mode="replicate")


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
