"""Sum of every element of a half tensor, accumulated and returned in float32."""

import torch
import torch.nn as nn

n = 8192 * 8192


class Model(nn.Module):
    def forward(self, x):
        return torch.sum(x, dtype=torch.float32)


def get_inputs():
    return [torch.randn(n, dtype=torch.float16)]


def get_init_inputs():
    return []
