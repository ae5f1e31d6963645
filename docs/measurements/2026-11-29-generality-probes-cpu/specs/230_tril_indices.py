import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return x[torch.tril_indices(8, 8)[0], torch.tril_indices(8, 8)[1]]


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 8)]


def get_init_inputs():
    return []
