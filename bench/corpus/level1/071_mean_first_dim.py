"""Mean over the batch dimension (dim 0) of a matrix."""

import torch
import torch.nn as nn

batch_size = 16384
features = 4096


class Model(nn.Module):
    def forward(self, x):
        return x.mean(dim=0)


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return []
