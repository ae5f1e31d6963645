import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return x.masked_fill(x > 0.5, -1e9).softmax(-1)


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
