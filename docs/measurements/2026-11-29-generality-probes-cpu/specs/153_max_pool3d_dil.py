import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.max_pool3d(x, 3, stride=2, padding=1, dilation=1, ceil_mode=True)


def get_inputs():
    return [torch.randn(1, 2, 9, 10, 11)]


def get_init_inputs():
    return []
