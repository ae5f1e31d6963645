"""Suffix sums along time written as total - prefix + x (a reverse inclusive scan)."""

import torch
import torch.nn as nn

batch = 2048
steps = 4096


class Model(nn.Module):
    def forward(self, rewards):
        total = rewards.sum(dim=1, keepdim=True)
        return total - torch.cumsum(rewards, dim=1) + rewards


def get_inputs():
    return [torch.randn(batch, steps)]


def get_init_inputs():
    return []
