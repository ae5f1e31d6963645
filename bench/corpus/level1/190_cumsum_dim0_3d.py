"""Cumulative sum along the leading (time) dimension of a (time, batch, features) tensor."""

import torch
import torch.nn as nn

time_steps = 1024
batch = 64
features = 512


class Model(nn.Module):
    def forward(self, x):
        return x.cumsum(0)


def get_inputs():
    return [torch.randn(time_steps, batch, features)]


def get_init_inputs():
    return []
