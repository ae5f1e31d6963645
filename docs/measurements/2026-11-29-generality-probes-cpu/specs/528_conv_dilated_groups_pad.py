import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=4)

    def forward(self, x, y=None):
        return self.c(x)


def get_inputs():
    return [torch.randn(2, 8, 11, 9)]


def get_init_inputs():
    return []
