import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.bincount(x, minlength=10)


def get_inputs():
    return [torch.randint(0, 10, (1000,))]


def get_init_inputs():
    return []
