"""L1 norm and infinity norm of every column."""

import torch
import torch.nn as nn

batch_size = 8192
dim = 8192


class Model(nn.Module):
    def forward(self, x):
        l1 = torch.linalg.vector_norm(x, ord=1, dim=0)
        linf = torch.linalg.vector_norm(x, ord=float("inf"), dim=0)
        return l1, linf


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
