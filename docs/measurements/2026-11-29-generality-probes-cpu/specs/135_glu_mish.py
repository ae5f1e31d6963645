import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.mish(F.glu(x, dim=1))


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return []
