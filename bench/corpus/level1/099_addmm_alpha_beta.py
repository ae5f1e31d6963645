"""addmm: beta * bias + alpha * (x @ W) with a learned weight and bias."""

import torch
import torch.nn as nn

batch_size = 4096
in_features = 2048
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features, alpha, beta):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) * 0.02)
        self.bias = nn.Parameter(torch.randn(out_features))
        self.alpha = alpha
        self.beta = beta

    def forward(self, x):
        return torch.addmm(self.bias, x, self.weight, beta=self.beta, alpha=self.alpha)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, 0.5, 2.0]
