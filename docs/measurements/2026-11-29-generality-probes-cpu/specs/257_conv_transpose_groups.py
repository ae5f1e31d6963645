import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.conv_transpose2d(x, torch.randn(4, 3, 3, 3), stride=2, padding=1, output_padding=1, groups=2, dilation=1)


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(2, 4, 5, 5)]


def get_init_inputs():
    return []
