"""UNet decoder step: ConvTranspose2d 2x up, concatenate the skip features, (Conv 3x3, BN, ReLU) twice."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 256
out_channels = 128
low_res = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x, skip):
        x = self.up(x)
        return self.conv(torch.cat([skip, x], dim=1))


def get_inputs():
    x = torch.randn(batch_size, in_channels, low_res, low_res)
    skip = torch.randn(batch_size, in_channels // 2, low_res * 2, low_res * 2)
    return [x, skip]


def get_init_inputs():
    return [in_channels, out_channels]
