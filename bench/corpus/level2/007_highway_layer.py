"""Highway layer: transform gate T = sigmoid(W_t x), H = relu(W_h x), output H*T + x*(1-T)."""

import torch
import torch.nn as nn

batch_size = 8192
size = 2048


class Model(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.H = nn.Linear(size, size)
        self.T = nn.Linear(size, size)
        nn.init.constant_(self.T.bias, -1.0)

    def forward(self, x):
        h = torch.relu(self.H(x))
        t = torch.sigmoid(self.T(x))
        return h * t + x * (1.0 - t)


def get_inputs():
    return [torch.randn(batch_size, size)]


def get_init_inputs():
    return [size]
