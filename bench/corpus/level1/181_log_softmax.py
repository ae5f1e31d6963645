"""Log-softmax over the vocabulary dimension of logits."""

import torch
import torch.nn as nn

batch_size = 2048
vocab_size = 50257


class Model(nn.Module):
    def forward(self, logits):
        return torch.log_softmax(logits, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, vocab_size) * 2]


def get_init_inputs():
    return []
