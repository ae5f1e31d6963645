import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a,b,c):
        return torch.einsum('bij,bjk,bkl->bil', a, b, c)


def get_inputs():
    return [torch.randn(2, 8, 16), torch.randn(2, 16, 12), torch.randn(2, 12, 4)]


def get_init_inputs():
    return []
