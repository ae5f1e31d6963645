import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(4, 8, 3, padding=1)
        self.b = nn.BatchNorm2d(8).eval()

    def forward(self, x):
        return F.relu(self.b(self.c(x)))


def get_inputs():
    return [torch.randn(2, 4, 8, 8)]


def get_init_inputs():
    return []
