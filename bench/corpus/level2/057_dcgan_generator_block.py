"""GAN generator block: ConvTranspose2d (4, stride 2, pad 1, no bias), BatchNorm2d, ReLU."""

import torch
import torch.nn as nn

batch_size = 128
ngf = 128
spatial = 32


class Model(nn.Module):
    def __init__(self, ngf):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
        )

    def forward(self, x):
        return self.main(x)


def get_inputs():
    return [torch.randn(batch_size, ngf * 2, spatial, spatial)]


def get_init_inputs():
    return [ngf]
