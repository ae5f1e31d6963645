"""Encoder attention core: scores + additive padding mask (-10000), softmax, dropout (eval), times V, heads merged."""

import math

import torch
import torch.nn as nn

batch_size = 32
num_attention_heads = 12
seq_length = 384
attention_head_size = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.1)

    def forward(self, query_layer, key_layer, value_layer, attention_mask):
        scores = torch.matmul(query_layer, key_layer.transpose(-1, -2)) / math.sqrt(query_layer.size(-1))
        scores = scores + attention_mask
        probs = self.dropout(nn.functional.softmax(scores, dim=-1))
        context = torch.matmul(probs, value_layer).permute(0, 2, 1, 3).contiguous()
        return context.view(context.size(0), context.size(1), -1)


def get_inputs():
    shape = (batch_size, num_attention_heads, seq_length, attention_head_size)
    lengths = torch.randint(seq_length // 2, seq_length + 1, (batch_size, 1))
    keep = (torch.arange(seq_length)[None, :] < lengths).float()
    attention_mask = ((1.0 - keep) * -10000.0)[:, None, None, :]
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape), attention_mask]


def get_init_inputs():
    return []
