"""InterFormer-style block: non-sequence features interact (self-attention over fields), a sequence summary conditions a personalized FFN over the behavior sequence, and cross gating exchanges information both ways."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 512
num_fields = 32
seq_len = 128
d = 128
heads = 4


class Model(nn.Module):
    def __init__(self, num_fields, d, heads):
        super().__init__()
        self.heads = heads
        self.field_norm = nn.LayerNorm(d)
        self.field_qkv = nn.Linear(d, 3 * d)
        self.field_out = nn.Linear(d, d)
        self.seq_norm = nn.LayerNorm(d)
        self.seq_qkv = nn.Linear(d, 3 * d)
        self.seq_out = nn.Linear(d, d)
        self.pffn_gen = nn.Linear(num_fields * d, d)
        self.pffn_in = nn.Linear(d, 2 * d)
        self.pffn_out = nn.Linear(2 * d, d)
        self.seq_to_field_gate = nn.Linear(d, d)
        self.field_to_seq_gate = nn.Linear(d, d)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)

    def mhsa(self, x, qkv, out):
        B, N, C = x.shape
        q, k, v = qkv(x).view(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, N, C)
        return out(y)

    def forward(self, fields, seq):
        B = fields.shape[0]
        fields = fields + self.mhsa(self.field_norm(fields), self.field_qkv, self.field_out)
        ctx = self.pffn_gen(fields.flatten(1)).unsqueeze(1)
        s = torch.cat([self.cls.expand(B, -1, -1), seq], dim=1)
        s = s + self.mhsa(self.seq_norm(s), self.seq_qkv, self.seq_out)
        s = s + self.pffn_out(F.gelu(self.pffn_in(s * torch.sigmoid(ctx))))
        summary = s[:, :1]
        fields = fields * torch.sigmoid(self.seq_to_field_gate(summary))
        s = s[:, 1:] * torch.sigmoid(self.field_to_seq_gate(fields.mean(dim=1, keepdim=True)))
        return fields, s


def get_inputs():
    return [torch.randn(batch_size, num_fields, d), torch.randn(batch_size, seq_len, d)]


def get_init_inputs():
    return [num_fields, d, heads]
