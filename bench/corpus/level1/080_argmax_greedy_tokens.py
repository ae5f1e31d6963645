"""Greedy decoding pick: argmax over the vocabulary of (batch, positions, vocab) logits."""

import torch
import torch.nn as nn

batch = 32
positions = 128
vocab = 32000


class Model(nn.Module):
    def forward(self, logits):
        return logits.argmax(-1)


def get_inputs():
    return [torch.randn(batch, positions, vocab)]


def get_init_inputs():
    return []
