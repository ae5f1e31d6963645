import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.ConvTranspose1d(8, 4, 5, stride=3, padding=1, output_padding=2)

    def forward(self, x):
        return self.m(x)


def get_inputs():
    return [torch.randn(2, 8, 16)]


def get_init_inputs():
    return []
