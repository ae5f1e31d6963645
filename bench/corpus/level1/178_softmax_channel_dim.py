"""Softmax over the channel dimension (dim 1) of an NCHW tensor (per-pixel class probabilities)."""

import torch
import torch.nn as nn

batch_size = 16
num_classes = 21
height = width = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.softmax = nn.Softmax(dim=1)

    def forward(self, logits):
        return self.softmax(logits)


def get_inputs():
    return [torch.randn(batch_size, num_classes, height, width) * 3]


def get_init_inputs():
    return []
