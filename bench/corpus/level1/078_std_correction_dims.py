"""Population standard deviation (correction=0) over dims (1, 2) with keepdim."""

import torch
import torch.nn as nn

batch_size = 512
seq_len = 256
hidden = 1024


class Model(nn.Module):
    def forward(self, x):
        return torch.std(x, dim=(1, 2), correction=0, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden) + torch.randn(batch_size, 1, 1)]


def get_init_inputs():
    return []
