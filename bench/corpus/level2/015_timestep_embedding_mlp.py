"""Diffusion timestep embedding: sinusoidal features of t, Linear, SiLU, Linear."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
freq_dim = 256
time_embed_dim = 1280


class Model(nn.Module):
    def __init__(self, freq_dim, time_embed_dim, max_period=10000):
        super().__init__()
        half = freq_dim // 2
        freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
        self.register_buffer("freqs", freqs)
        self.linear_1 = nn.Linear(freq_dim, time_embed_dim)
        self.linear_2 = nn.Linear(time_embed_dim, time_embed_dim)

    def forward(self, timesteps):
        args = timesteps[:, None].float() * self.freqs[None]
        emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
        return self.linear_2(F.silu(self.linear_1(emb)))


def get_inputs():
    return [torch.randint(0, 1000, (batch_size,))]


def get_init_inputs():
    return [freq_dim, time_embed_dim]
