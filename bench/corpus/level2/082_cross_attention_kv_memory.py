"""Cross-attention from decoder states to encoder memory via nn.MultiheadAttention, dropout (eval), residual, LayerNorm."""

import torch
import torch.nn as nn

batch_size = 32
tgt_len = 128
src_len = 512
d_model = 512
nhead = 8


class Model(nn.Module):
    def __init__(self, d_model, nhead):
        super().__init__()
        self.cross_attn = nn.MultiheadAttention(d_model, nhead, dropout=0.1, batch_first=True)
        self.dropout = nn.Dropout(0.1)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, tgt, memory):
        attn_out, _ = self.cross_attn(tgt, memory, memory, need_weights=False)
        return self.norm(tgt + self.dropout(attn_out))


def get_inputs():
    return [torch.randn(batch_size, tgt_len, d_model), torch.randn(batch_size, src_len, d_model)]


def get_init_inputs():
    return [d_model, nhead]
