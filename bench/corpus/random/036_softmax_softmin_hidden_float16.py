"""softmin over hidden of a 3D float16 tensor, computed in float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 46
seq_len = 128
hidden = 4096


class Model(nn.Module):
    def forward(self, x):
        return F.softmin(x, dim=2, dtype=torch.float32)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden, dtype=torch.float16) * 10]


def get_init_inputs():
    return []
