"""MobileNetV3 stem: Conv2d 3x3 stride 2 from RGB, BatchNorm2d, Hardswish."""

import torch
import torch.nn as nn

batch_size = 128
image_size = 224
stem_channels = 16


class Model(nn.Module):
    def __init__(self, stem_channels):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, stem_channels, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(stem_channels, eps=0.001, momentum=0.01),
            nn.Hardswish(),
        )

    def forward(self, images):
        return self.stem(images)


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [stem_channels]
