"""masked_fill of attention scores with -inf where a padding mask is set."""

import torch
import torch.nn as nn

batch_size = 16
num_heads = 16
seq_len = 1024


class Model(nn.Module):
    def forward(self, scores, key_padding_mask):
        return scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))


def get_inputs():
    scores = torch.randn(batch_size, num_heads, seq_len, seq_len)
    lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size, 1))
    key_padding_mask = torch.arange(seq_len).unsqueeze(0) >= lengths
    return [scores, key_padding_mask]


def get_init_inputs():
    return []
