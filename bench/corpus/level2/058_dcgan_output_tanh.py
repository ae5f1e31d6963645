"""Last generator layer: ConvTranspose2d to RGB (4, stride 2, pad 1) followed by tanh."""

import torch
import torch.nn as nn

batch_size = 256
ngf = 64
spatial = 32
nc = 3


class Model(nn.Module):
    def __init__(self, ngf, nc):
        super().__init__()
        self.to_rgb = nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False)

    def forward(self, x):
        return torch.tanh(self.to_rgb(x))


def get_inputs():
    return [torch.randn(batch_size, ngf, spatial, spatial)]


def get_init_inputs():
    return [ngf, nc]
