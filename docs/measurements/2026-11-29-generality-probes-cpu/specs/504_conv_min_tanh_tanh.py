import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3)

    def forward(self, x, y=None):
        x = torch.min(self.c(x), dim=1, keepdim=True)[0]
        return torch.tanh(torch.tanh(x))


def get_inputs():
    return [torch.randn(2, 3, 9, 9)]


def get_init_inputs():
    return []
