import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, a):
        return torch.linalg.cholesky(a @ a.T + torch.eye(8))


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 8)]


def get_init_inputs():
    return []
