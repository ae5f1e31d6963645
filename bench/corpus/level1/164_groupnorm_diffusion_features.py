"""GroupNorm with 32 groups and eps 1e-6 over 320-channel latent feature maps."""

import torch
import torch.nn as nn

batch = 16
latent_channels = 320
latent_size = 64


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.GroupNorm(32, channels, eps=1e-6, affine=True)

    def forward(self, h):
        return self.norm(h)


def get_inputs():
    return [torch.randn(batch, latent_channels, latent_size, latent_size)]


def get_init_inputs():
    return [latent_channels]
