"""Token embedding lookup with nn.Embedding."""

import torch
import torch.nn as nn

vocab_size = 50257
embedding_dim = 1024
batch_size = 32
seq_len = 1024


class Model(nn.Module):
    def __init__(self, vocab_size, embedding_dim):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, embedding_dim)

    def forward(self, input_ids):
        return self.wte(input_ids)


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, embedding_dim]
