"""InstanceNorm2d (no affine, no running stats) on stylization features."""

import torch
import torch.nn as nn

n_images = 32
c = 128
img_h = 192
img_w = 256


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(c)

    def forward(self, content):
        return self.inorm(content)


def get_inputs():
    return [torch.randn(n_images, c, img_h, img_w) * 3 + 1]


def get_init_inputs():
    return [c]
