"""Denoising objective: nn.MSELoss (sum) between predicted and true noise on image latents, divided by batch."""

import torch
import torch.nn as nn

batch = 64
latent_shape = (4, 128, 128)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.mse = nn.MSELoss(reduction="sum")

    def forward(self, noise_pred, noise):
        return self.mse(noise_pred, noise) / noise.size(0)


def get_inputs():
    return [torch.randn(batch, *latent_shape), torch.randn(batch, *latent_shape)]


def get_init_inputs():
    return []
