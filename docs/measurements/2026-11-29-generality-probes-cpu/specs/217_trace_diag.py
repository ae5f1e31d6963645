import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return torch.trace(x[:, :8]) + torch.diagonal(x[:, :8], offset=1).sum() + torch.diag(x[0]).sum()


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
