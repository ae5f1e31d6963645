import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x,p):
        return F.cross_entropy(x, p.softmax(-1))


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(64, 10), torch.randn(64, 10)]


def get_init_inputs():
    return []
