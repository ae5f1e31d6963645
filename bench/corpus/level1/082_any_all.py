"""Per-row any(x > t) and all(x > -t) over boolean tests of a matrix."""

import torch
import torch.nn as nn

batch_size = 16384
dim = 2048


class Model(nn.Module):
    def __init__(self, t):
        super().__init__()
        self.t = t

    def forward(self, x):
        return torch.any(x > self.t, dim=1), torch.all(x > -self.t, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [3.5]
