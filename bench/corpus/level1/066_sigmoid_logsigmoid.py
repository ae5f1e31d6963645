"""Returns sigmoid(x) and logsigmoid(x) of a large-magnitude input."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
dim = 8192


class Model(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x), F.logsigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 10]


def get_init_inputs():
    return []
