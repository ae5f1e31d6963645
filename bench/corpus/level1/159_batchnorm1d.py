"""BatchNorm1d over features of a (batch, features) matrix, using running statistics."""

import torch
import torch.nn as nn

batch_size = 8192
num_features = 1024


class Model(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm1d(num_features)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, num_features)]


def get_init_inputs():
    return [num_features]
