"""Hardsigmoid activation in half precision."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 2048


class Model(nn.Module):
    def forward(self, x):
        return F.hardsigmoid(x)


def get_inputs():
    return [(torch.randn(batch_size, dim) * 4).to(torch.float16)]


def get_init_inputs():
    return []
