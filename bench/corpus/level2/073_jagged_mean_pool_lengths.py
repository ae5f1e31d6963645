"""Mean pooling of padded variable-length histories: mask by length, sum, divide by the clamped length, then Linear + ReLU."""

import torch
import torch.nn as nn

batch_size = 4096
max_len = 256
dim = 128


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, padded, lengths):
        mask = (torch.arange(padded.size(1), device=padded.device)[None, :] < lengths[:, None]).unsqueeze(-1)
        summed = (padded * mask).sum(dim=1)
        pooled = summed / lengths.clamp(min=1).unsqueeze(-1).to(padded.dtype)
        return torch.relu(self.proj(pooled))


def get_inputs():
    return [torch.randn(batch_size, max_len, dim), torch.randint(0, max_len + 1, (batch_size,))]


def get_init_inputs():
    return [dim]
