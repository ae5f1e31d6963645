import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.GRU(16, 24, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, x):
        return self.m(x)[0]


def get_inputs():
    return [torch.randn(4, 10, 16)]


def get_init_inputs():
    return []
