import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, a,b):
        return torch.linalg.solve(a + 8 * torch.eye(8), b)


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 8), torch.randn(8, 3)]


def get_init_inputs():
    return []
