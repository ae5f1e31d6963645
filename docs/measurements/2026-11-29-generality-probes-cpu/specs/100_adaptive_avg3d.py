import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.adaptive_avg_pool3d(x, (3, 5, 2))


def get_inputs():
    return [torch.randn(2, 4, 8, 10, 7)]


def get_init_inputs():
    return []
