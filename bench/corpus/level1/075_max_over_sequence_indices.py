"""Max-over-time pooling of sequence features, returning the values and the time step of each maximum."""

import torch
import torch.nn as nn

batch = 512
time_steps = 1024
channels = 384


class Model(nn.Module):
    def forward(self, feats):
        best, at = feats.max(dim=1)
        return best, at


def get_inputs():
    return [torch.randn(batch, time_steps, channels)]


def get_init_inputs():
    return []
