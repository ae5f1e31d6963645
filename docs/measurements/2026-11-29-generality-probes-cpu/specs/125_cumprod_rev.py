import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.cumprod(x.flip(-1), -1).flip(-1)


def get_inputs():
    return [1 + torch.rand(8, 64) / 100]


def get_init_inputs():
    return []
