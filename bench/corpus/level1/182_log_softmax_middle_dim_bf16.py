"""bfloat16 log-softmax over the middle dimension of a 3D tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 256
classes = 1000
positions = 128


class Model(nn.Module):
    def forward(self, x):
        return F.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch, classes, positions, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
