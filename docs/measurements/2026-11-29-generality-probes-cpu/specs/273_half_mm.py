import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, a,b):
        return torch.matmul(a, b)


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(2, 3, 8, 16, dtype=torch.float16), torch.randn(16, 24, dtype=torch.float16)]


def get_init_inputs():
    return []
