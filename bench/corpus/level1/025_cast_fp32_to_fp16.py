"""Casts a float32 tensor to float16."""

import torch
import torch.nn as nn

batch_size = 8192
dim = 8192


class Model(nn.Module):
    def forward(self, x):
        return x.to(torch.float16)


def get_inputs():
    return [torch.randn(batch_size, dim) * 100]


def get_init_inputs():
    return []
