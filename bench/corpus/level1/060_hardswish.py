"""Hardswish activation x * relu6(x + 3) / 6."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
channels = 96
resolution = 112


class Model(nn.Module):
    def forward(self, x):
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(batch_size, channels, resolution, resolution) * 4]


def get_init_inputs():
    return []
