"""Image stem convolution: 3 -> 64 channels, 7x7 kernel, stride 2, padding 3, on 224x224 images."""

import torch
import torch.nn as nn

batch_size = 64
input_shape = (3, 224, 224)
num_filters = 64


class Model(nn.Module):
    def __init__(self, in_channels, num_filters):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, num_filters, kernel_size=7, stride=2, padding=3, bias=False)

    def forward(self, images):
        return self.conv(images)


def get_inputs():
    return [torch.randn(batch_size, *input_shape)]


def get_init_inputs():
    return [input_shape[0], num_filters]
