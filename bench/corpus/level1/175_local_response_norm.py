"""LocalResponseNorm across 5 neighbouring channels (AlexNet style)."""

import torch
import torch.nn as nn

batch_size = 64
channels = 96
height = width = 55


class Model(nn.Module):
    def __init__(self, size, alpha, beta, k):
        super().__init__()
        self.lrn = nn.LocalResponseNorm(size, alpha=alpha, beta=beta, k=k)

    def forward(self, x):
        return self.lrn(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [5, 1e-4, 0.75, 2.0]
