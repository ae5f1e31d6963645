import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, t):
        return torch.isin(t, torch.tensor([1, 3, 5]))


def get_inputs():
    torch.manual_seed(0)
    return [torch.randint(0, 8, (8, 16))]


def get_init_inputs():
    return []
