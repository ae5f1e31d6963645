"""softmin over hidden of a 3D bfloat16 tensor (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 168
seq_len = 256
hidden = 256


class Model(nn.Module):
    def forward(self, x):
        return F.softmin(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden, dtype=torch.bfloat16) * 10]


def get_init_inputs():
    return []
