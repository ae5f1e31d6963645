"""Residual add then RMSNorm (float32 math, bf16 output), returning both the normalized tensor and the new residual."""

import torch
import torch.nn as nn

batch_size = 16
seq_len = 2048
hidden_size = 4096


class Model(nn.Module):
    def __init__(self, hidden_size, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))
        self.variance_epsilon = eps

    def forward(self, hidden_states, residual):
        residual = hidden_states + residual
        h = residual.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * h.to(torch.bfloat16), residual


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size, dtype=torch.bfloat16),
            torch.randn(batch_size, seq_len, hidden_size, dtype=torch.bfloat16)]


def get_init_inputs():
    return [hidden_size]
