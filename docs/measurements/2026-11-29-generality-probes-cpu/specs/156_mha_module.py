import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.MultiheadAttention(64, 4, batch_first=True)

    def forward(self, x):
        return self.m(x, x, x, need_weights=False)[0]


def get_inputs():
    return [torch.randn(4, 16, 64)]


def get_init_inputs():
    return []
