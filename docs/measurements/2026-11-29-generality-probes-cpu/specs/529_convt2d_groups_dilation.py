import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.ConvTranspose2d(8, 8, 3, stride=2, padding=1, dilation=2, groups=2)

    def forward(self, x, y=None):
        return self.c(x)


def get_inputs():
    return [torch.randn(2, 8, 5, 6)]


def get_init_inputs():
    return []
