import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a,b):
        return F.kl_div(torch.log_softmax(a, -1), torch.softmax(b, -1), reduction='batchmean')


def get_inputs():
    return [torch.randn(64, 8), torch.randn(64, 8)]


def get_init_inputs():
    return []
