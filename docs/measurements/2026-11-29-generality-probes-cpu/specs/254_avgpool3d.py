import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.avg_pool3d(x, 2, stride=2, ceil_mode=True) 


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(1, 2, 7, 8, 9)]


def get_init_inputs():
    return []
