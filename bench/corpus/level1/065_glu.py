"""Gated linear unit: first half of the last dimension times sigmoid of the second half."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 8192 * 2


class Model(nn.Module):
    def forward(self, x):
        return F.glu(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
