"""Feature gating: gate = 2 * sigmoid(W x + b) scales the input features elementwise, then a ReLU projection."""

import torch
import torch.nn as nn

batch_size = 16384
num_features = 1024
out_dim = 512


class Model(nn.Module):
    def __init__(self, num_features, out_dim):
        super().__init__()
        self.gate = nn.Linear(num_features, num_features)
        self.proj = nn.Linear(num_features, out_dim)

    def forward(self, x):
        g = 2.0 * torch.sigmoid(self.gate(x))
        return torch.relu(self.proj(x * g))


def get_inputs():
    return [torch.randn(batch_size, num_features)]


def get_init_inputs():
    return [num_features, out_dim]
