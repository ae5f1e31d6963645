"""baddbmm: input + alpha * bmm(batch1, batch2) with a broadcast input."""

import torch
import torch.nn as nn

batch = 64
n = 512
k = 64
m = 512


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, bias, batch1, batch2):
        return torch.baddbmm(bias, batch1, batch2, alpha=self.alpha)


def get_inputs():
    return [torch.randn(1, n, m), torch.randn(batch, n, k), torch.randn(batch, k, m)]


def get_init_inputs():
    return [0.125]
