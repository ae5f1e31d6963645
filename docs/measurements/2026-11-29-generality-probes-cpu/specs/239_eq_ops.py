import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return (torch.isclose(x, x * 1.000001)).float() + torch.isfinite(x).float() + torch.isnan(x).float() + torch.isinf(x / 0).float()


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
