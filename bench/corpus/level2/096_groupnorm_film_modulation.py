"""FiLM conditioning: GroupNorm without affine, then per-channel scale and shift predicted from a conditioning vector."""

import torch
import torch.nn as nn

batch_size = 32
channels = 256
height = width = 32
cond_dim = 512


class Model(nn.Module):
    def __init__(self, channels, cond_dim):
        super().__init__()
        self.norm = nn.GroupNorm(32, channels, affine=False)
        self.film = nn.Linear(cond_dim, 2 * channels)

    def forward(self, x, cond):
        gamma, beta = self.film(cond).unsqueeze(-1).unsqueeze(-1).chunk(2, dim=1)
        return self.norm(x) * (1 + gamma) + beta


def get_inputs():
    return [torch.randn(batch_size, channels, height, width), torch.randn(batch_size, cond_dim)]


def get_init_inputs():
    return [channels, cond_dim]
