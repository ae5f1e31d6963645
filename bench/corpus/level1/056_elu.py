"""ELU activation with alpha = 1.3."""

import torch
import torch.nn as nn

num_nodes = 262144
hidden = 128


class Model(nn.Module):
    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.elu = nn.ELU(alpha=alpha)

    def forward(self, x):
        return self.elu(x)


def get_inputs():
    return [torch.randn(num_nodes, hidden)]


def get_init_inputs():
    return [1.3]
