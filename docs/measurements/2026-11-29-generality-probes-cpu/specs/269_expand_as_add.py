import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x,b):
        return x + b.expand_as(x) + b.unsqueeze(0).expand(8, 16)


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 16), torch.randn(16)]


def get_init_inputs():
    return []
