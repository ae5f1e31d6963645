"""Bucket index of every value against a sorted boundary vector (torch.bucketize)."""

import torch
import torch.nn as nn

batch_size = 16384
num_features = 512
num_boundaries = 255


class Model(nn.Module):
    def __init__(self, num_boundaries):
        super().__init__()
        self.register_buffer("boundaries", torch.linspace(-3.0, 3.0, num_boundaries))

    def forward(self, x):
        return torch.bucketize(x, self.boundaries)


def get_inputs():
    return [torch.randn(batch_size, num_features)]


def get_init_inputs():
    return [num_boundaries]
