import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.sort(x, dim=-1, stable=True)[1]


def get_inputs():
    return [torch.randint(0, 5, (8, 32)).float()]


def get_init_inputs():
    return []
