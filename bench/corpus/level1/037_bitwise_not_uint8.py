"""Bitwise NOT of a uint8 image tensor."""

import torch
import torch.nn as nn

batch_size = 64
image_shape = (3, 512, 512)


class Model(nn.Module):
    def forward(self, img):
        return torch.bitwise_not(img)


def get_inputs():
    return [torch.randint(0, 256, (batch_size, *image_shape), dtype=torch.uint8)]


def get_init_inputs():
    return []
