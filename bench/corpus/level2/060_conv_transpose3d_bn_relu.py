"""Volumetric decoder: ConvTranspose3d (2x up), BatchNorm3d, ReLU, then a 1x1x1 Conv3d classifier."""

import torch
import torch.nn as nn

batch_size = 2
in_channels = 128
out_channels = 64
num_classes = 4
D = H = W = 32


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, num_classes):
        super().__init__()
        self.up = nn.ConvTranspose3d(in_channels, out_channels, kernel_size=2, stride=2)
        self.bn = nn.BatchNorm3d(out_channels)
        self.head = nn.Conv3d(out_channels, num_classes, kernel_size=1)

    def forward(self, x):
        return self.head(torch.relu(self.bn(self.up(x))))


def get_inputs():
    return [torch.randn(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, num_classes]
