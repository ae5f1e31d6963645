"""MLP block: Linear, BatchNorm1d, ReLU, Dropout, Linear."""

import torch
import torch.nn as nn

batch_size = 16384
in_dim = 256
hidden_dim = 1024
out_dim = 256


class Model(nn.Module):
    def __init__(self, in_dim, hidden_dim, out_dim):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(in_dim, hidden_dim),
            nn.BatchNorm1d(hidden_dim),
            nn.ReLU(inplace=True),
            nn.Dropout(0.3),
            nn.Linear(hidden_dim, out_dim),
        )

    def forward(self, x):
        return self.layers(x)


def get_inputs():
    return [torch.randn(batch_size, in_dim)]


def get_init_inputs():
    return [in_dim, hidden_dim, out_dim]
