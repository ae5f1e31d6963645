"""First half of a diffusion ResBlock: GroupNorm(32), SiLU, 3x3 Conv2d, plus a projected time embedding."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 320
latent_hw = 64
temb_dim = 1280


class Model(nn.Module):
    def __init__(self, channels, temb_dim):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, channels, eps=1e-5)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb_dim, channels)

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        return h + self.time_emb_proj(F.silu(temb))[:, :, None, None]


def get_inputs():
    return [torch.randn(batch_size, channels, latent_hw, latent_hw), torch.randn(batch_size, temb_dim)]


def get_init_inputs():
    return [channels, temb_dim]
