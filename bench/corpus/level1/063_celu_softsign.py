"""Sum of CELU(alpha=0.5) and softsign of the same input."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
dim = 16384


class Model(nn.Module):
    def forward(self, x):
        return F.celu(x, alpha=0.5) + F.softsign(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
