import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x, y=None):
        return torch.relu(self.c(x))


def get_inputs():
    return [torch.randn(2, 4, 9)]


def get_init_inputs():
    return []
