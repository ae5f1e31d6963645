import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return torch.logit(torch.sigmoid(x), eps=1e-6) + torch.xlogy(x.abs(), x.abs() + 1) + torch.sinc(x)


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
