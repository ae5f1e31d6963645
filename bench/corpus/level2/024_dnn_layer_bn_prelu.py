"""Recommendation DNN layer: Linear, BatchNorm1d, PReLU, Dropout (eval)."""

import torch
import torch.nn as nn

batch_size = 32768
input_dim = 1024
hidden_dim = 512


class Model(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.fc = nn.Linear(input_dim, hidden_dim)
        self.bn = nn.BatchNorm1d(hidden_dim)
        self.act = nn.PReLU(hidden_dim)
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        return self.drop(self.act(self.bn(self.fc(x))))


def get_inputs():
    return [torch.randn(batch_size, input_dim)]


def get_init_inputs():
    return [input_dim, hidden_dim]
