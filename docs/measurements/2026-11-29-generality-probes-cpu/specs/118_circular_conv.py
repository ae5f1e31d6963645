import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.Conv1d(4, 8, 3, padding=1, padding_mode='circular')

    def forward(self, x):
        return self.m(x)


def get_inputs():
    return [torch.randn(2, 4, 16)]


def get_init_inputs():
    return []
