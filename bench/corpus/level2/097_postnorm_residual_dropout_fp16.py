"""Half-precision post-norm residual: dropout (eval) of the sublayer output, add the input, LayerNorm."""

import torch
import torch.nn as nn

batch = 64
seq = 512
d_model = 1024


class Model(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.dropout = nn.Dropout(0.1)
        self.norm = nn.LayerNorm(d_model, dtype=torch.float16)

    def forward(self, x, sublayer_out):
        return self.norm(x + self.dropout(sublayer_out))


def get_inputs():
    return [torch.randn(batch, seq, d_model, dtype=torch.float16), torch.randn(batch, seq, d_model, dtype=torch.float16)]


def get_init_inputs():
    return [d_model]
