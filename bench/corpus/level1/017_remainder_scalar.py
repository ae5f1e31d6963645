"""Python-style remainder of a tensor by a scalar divisor (result has the divisor's sign)."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096


class Model(nn.Module):
    def __init__(self, divisor):
        super().__init__()
        self.divisor = divisor

    def forward(self, x):
        return torch.remainder(x, self.divisor)


def get_inputs():
    return [torch.randn(batch_size, dim) * 20]


def get_init_inputs():
    return [3.5]
