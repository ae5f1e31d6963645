"""BERT-style encoder layer written out: self-attention with additive mask, dense + residual + LayerNorm, GELU FFN + residual + LayerNorm."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
seq_length = 512
hidden_size = 768
num_attention_heads = 12
intermediate_size = 3072


class Model(nn.Module):
    def __init__(self, hidden_size, num_attention_heads, intermediate_size):
        super().__init__()
        self.h = num_attention_heads
        self.query = nn.Linear(hidden_size, hidden_size)
        self.key = nn.Linear(hidden_size, hidden_size)
        self.value = nn.Linear(hidden_size, hidden_size)
        self.attn_out = nn.Linear(hidden_size, hidden_size)
        self.attn_norm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.intermediate = nn.Linear(hidden_size, intermediate_size)
        self.output = nn.Linear(intermediate_size, hidden_size)
        self.out_norm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def split(self, x):
        B, T, C = x.shape
        return x.view(B, T, self.h, C // self.h).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        q, k, v = self.split(self.query(hidden_states)), self.split(self.key(hidden_states)), self.split(self.value(hidden_states))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
        scores = scores + (1.0 - attention_mask[:, None, None, :].to(scores.dtype)) * torch.finfo(scores.dtype).min
        ctx = self.dropout(F.softmax(scores, dim=-1)) @ v
        ctx = ctx.permute(0, 2, 1, 3).reshape(hidden_states.shape)
        h = self.attn_norm(self.dropout(self.attn_out(ctx)) + hidden_states)
        return self.out_norm(self.dropout(self.output(F.gelu(self.intermediate(h)))) + h)


def get_inputs():
    lengths = torch.randint(64, seq_length + 1, (batch_size, 1))
    attention_mask = (torch.arange(seq_length)[None, :] < lengths).long()
    return [torch.randn(batch_size, seq_length, hidden_size), attention_mask]


def get_init_inputs():
    return [hidden_size, num_attention_heads, intermediate_size]
