import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return torch.tile(x, (2, 1)).narrow(0, 3, 8) + torch.take(x, torch.arange(0, 128).view(8, 16) % 100)


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
