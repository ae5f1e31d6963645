"""Softplus with beta=2 and threshold=10."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 4096


class Model(nn.Module):
    def __init__(self, beta, threshold):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x):
        return F.softplus(x, beta=self.beta, threshold=self.threshold)


def get_inputs():
    return [torch.randn(batch_size, dim) * 8]


def get_init_inputs():
    return [2.0, 10.0]
