import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.softmin(x, dim=0) + F.log_softmax(x, dim=0) + F.gumbel_softmax(x, tau=1, hard=False) * 0


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
