"""Log-sum-exp over dims (2, 3) of a 4D tensor, keepdim."""

import torch
import torch.nn as nn

batch_size = 64
channels = 128
height = width = 64


class Model(nn.Module):
    def forward(self, x):
        return torch.logsumexp(x, dim=(2, 3), keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 4 - 20]


def get_init_inputs():
    return []
