"""Elementwise Huber loss (delta=2.0, reduction='none')."""

import torch
import torch.nn as nn

batch_size = 8192
dim = 4096


class Model(nn.Module):
    def __init__(self, delta):
        super().__init__()
        self.loss = nn.HuberLoss(reduction="none", delta=delta)

    def forward(self, pred, target):
        return self.loss(pred, target)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3, torch.randn(batch_size, dim)]


def get_init_inputs():
    return [2.0]
