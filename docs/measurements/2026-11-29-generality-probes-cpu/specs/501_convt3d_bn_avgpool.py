import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1)
        self.b = nn.BatchNorm3d(6)

    def forward(self, x, y=None):
        return F.avg_pool3d(self.b(self.c(x)), 2)


def get_inputs():
    return [torch.randn(2, 4, 4, 5, 5)]


def get_init_inputs():
    return []
