import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3, padding=1)
        self.g = nn.GroupNorm(2, 8)

    def forward(self, x, y=None):
        c = self.c(x)
        n = self.g(c)
        h = F.hardswish(torch.tanh(n))
        return torch.logsumexp(c + h, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(2, 3, 9, 9)]


def get_init_inputs():
    return []
