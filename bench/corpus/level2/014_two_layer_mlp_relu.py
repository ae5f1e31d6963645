"""Two linear layers with ReLU between them and a sigmoid output (binary scorer)."""

import torch
import torch.nn as nn

batch_size = 16384
input_dim = 512
hidden_dim = 1024


class Model(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(input_dim, hidden_dim),
            nn.ReLU(),
            nn.Linear(hidden_dim, 1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(batch_size, input_dim)]


def get_init_inputs():
    return [input_dim, hidden_dim]
