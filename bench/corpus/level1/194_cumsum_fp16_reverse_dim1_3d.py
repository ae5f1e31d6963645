"""Reverse cumulative sum along dim 1 of a half-precision 3D tensor, accumulated in float32."""

import torch
import torch.nn as nn

batch = 64
seq = 2048
channels = 256


class Model(nn.Module):
    def forward(self, x):
        return torch.flip(torch.cumsum(torch.flip(x, dims=[1]), dim=1, dtype=torch.float32), dims=[1])


def get_inputs():
    return [torch.randn(batch, seq, channels, dtype=torch.float16)]


def get_init_inputs():
    return []
