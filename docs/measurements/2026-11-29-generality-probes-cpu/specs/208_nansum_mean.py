import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return torch.nansum(torch.where(x > 1, float('nan'), x)) + torch.nanmean(torch.where(x > 1, float('nan'), x), dim=1).sum()


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
