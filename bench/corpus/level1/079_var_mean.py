"""Variance and mean over dim 0 computed together with torch.var_mean."""

import torch
import torch.nn as nn

num_samples = 32768
num_features = 1024


class Model(nn.Module):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=0)
        return var, mean


def get_inputs():
    return [torch.randn(num_samples, num_features) * 2 + 5]


def get_init_inputs():
    return []
