"""LayerNorm over all of (C, H, W) of each image, with elementwise affine parameters."""

import torch
import torch.nn as nn

batch = 32
c, h, w = 32, 128, 128


class Model(nn.Module):
    def __init__(self, c, h, w):
        super().__init__()
        self.norm = nn.LayerNorm([c, h, w])

    def forward(self, img):
        return self.norm(img)


def get_inputs():
    return [torch.randn(batch, c, h, w)]


def get_init_inputs():
    return [c, h, w]
