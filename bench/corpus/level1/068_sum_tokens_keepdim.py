"""Sums token vectors over the sequence axis of (batch, seq, hidden), keeping that axis as size 1."""

import torch
import torch.nn as nn

batch = 64
seq = 2048
hidden = 1024


class Model(nn.Module):
    def forward(self, tokens):
        return tokens.sum(1, keepdim=True)


def get_inputs():
    return [torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return []
