"""GELU written by hand: 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3)))."""

import math

import torch
import torch.nn as nn

batch_size = 128
seq_len = 512
n_embd = 768 * 4


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def get_inputs():
    return [torch.randn(batch_size, seq_len, n_embd)]


def get_init_inputs():
    return []
