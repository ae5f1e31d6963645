"""ShuffleNetV2 unit: channel split, (1x1 conv, depthwise 3x3, 1x1 conv with BN/ReLU) on one half, concat, channel shuffle."""

import torch
import torch.nn as nn

batch_size = 128
channels = 232
height = width = 14


def channel_shuffle(x, groups):
    b, c, h, w = x.shape
    return x.view(b, groups, c // groups, h, w).transpose(1, 2).reshape(b, c, h, w)


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        branch = channels // 2
        self.branch2 = nn.Sequential(
            nn.Conv2d(branch, branch, 1, bias=False), nn.BatchNorm2d(branch), nn.ReLU(inplace=True),
            nn.Conv2d(branch, branch, 3, 1, 1, groups=branch, bias=False), nn.BatchNorm2d(branch),
            nn.Conv2d(branch, branch, 1, bias=False), nn.BatchNorm2d(branch), nn.ReLU(inplace=True),
        )

    def forward(self, x):
        x1, x2 = x.chunk(2, dim=1)
        out = torch.cat((x1, self.branch2(x2)), dim=1)
        return channel_shuffle(out, 2)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
