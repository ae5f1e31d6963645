"""p-norm with p=3 over dims (1, 2), keepdim, via torch.norm."""

import torch
import torch.nn as nn

batch_size = 256
seq_len = 1024
dim = 512


class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        return torch.norm(x, p=self.p, dim=(1, 2), keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]


def get_init_inputs():
    return [3.0]
