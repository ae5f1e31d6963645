"""ShuffleNet v1 unit: grouped 1x1 convolution, channel shuffle, depthwise 3x3, grouped 1x1, residual add."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 240
groups = 3
height = 28
width = 28


class Model(nn.Module):
    def __init__(self, channels, groups):
        super().__init__()
        mid = channels // 4
        self.groups = groups
        self.conv1 = nn.Conv2d(channels, mid, 1, groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, padding=1, groups=mid, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, channels, 1, groups=groups, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        b, c, h, w = out.size()
        out = out.view(b, self.groups, c // self.groups, h, w).transpose(1, 2).contiguous().view(b, -1, h, w)
        out = self.bn2(self.conv2(out))
        out = self.bn3(self.conv3(out))
        return F.relu(out + x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups]
