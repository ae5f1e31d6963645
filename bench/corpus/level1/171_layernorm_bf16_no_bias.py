"""bfloat16 LayerNorm with weight but no bias, eps 1e-6."""

import torch
import torch.nn as nn

tokens = 65536
d_model = 1024


class Model(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=1e-6, bias=False, dtype=torch.bfloat16)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(tokens, d_model, dtype=torch.bfloat16)]


def get_init_inputs():
    return [d_model]
