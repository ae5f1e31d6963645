"""Feature-pyramid top-down merge: nearest 2x upsample of the coarse map, add the 1x1 lateral conv, 3x3 smoothing conv."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 512
fpn_channels = 256
fine_size = 100


class Model(nn.Module):
    def __init__(self, in_channels, fpn_channels):
        super().__init__()
        self.lateral = nn.Conv2d(in_channels, fpn_channels, 1)
        self.smooth = nn.Conv2d(fpn_channels, fpn_channels, 3, padding=1)

    def forward(self, coarse, fine):
        top_down = F.interpolate(coarse, scale_factor=2, mode="nearest")
        return self.smooth(self.lateral(fine) + top_down)


def get_inputs():
    coarse = torch.randn(batch_size, fpn_channels, fine_size // 2, fine_size // 2)
    fine = torch.randn(batch_size, in_channels, fine_size, fine_size)
    return [coarse, fine]


def get_init_inputs():
    return [in_channels, fpn_channels]
