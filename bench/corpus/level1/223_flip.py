"""Flips an image batch horizontally and vertically (dims 2 and 3)."""

import torch
import torch.nn as nn

batch_size = 64
image_shape = (3, 224, 224)


class Model(nn.Module):
    def forward(self, images):
        return torch.flip(images, dims=(2, 3))


def get_inputs():
    return [torch.randn(batch_size, *image_shape)]


def get_init_inputs():
    return []
