"""3D double convolution: (Conv3d 3x3x3, GroupNorm, ReLU) twice, as in volumetric segmentation encoders."""

import torch
import torch.nn as nn

batch_size = 2
in_channels = 32
out_channels = 64
volume = (64, 64, 64)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups=8):
        super().__init__()
        self.double_conv = nn.Sequential(
            nn.Conv3d(in_channels, out_channels, 3, padding=1, bias=False),
            nn.GroupNorm(groups, out_channels),
            nn.ReLU(inplace=True),
            nn.Conv3d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.GroupNorm(groups, out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.double_conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, *volume)]


def get_init_inputs():
    return [in_channels, out_channels]
