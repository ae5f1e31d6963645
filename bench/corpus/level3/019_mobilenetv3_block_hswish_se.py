"""MobileNetV3 bneck: 1x1 expand + BN + hardswish, depthwise 5x5 stride 2, hard-sigmoid squeeze-excitation, 1x1 project + BN."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 40
expanded = 240
out_channels = 80
height = width = 28


class Model(nn.Module):
    def __init__(self, in_channels, expanded, out_channels):
        super().__init__()
        self.expand = nn.Sequential(nn.Conv2d(in_channels, expanded, 1, bias=False), nn.BatchNorm2d(expanded), nn.Hardswish())
        self.dw = nn.Sequential(
            nn.Conv2d(expanded, expanded, 5, 2, 2, groups=expanded, bias=False), nn.BatchNorm2d(expanded), nn.Hardswish()
        )
        squeeze = expanded // 4
        self.fc1 = nn.Conv2d(expanded, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, expanded, 1)
        self.project = nn.Sequential(nn.Conv2d(expanded, out_channels, 1, bias=False), nn.BatchNorm2d(out_channels))

    def forward(self, x):
        x = self.dw(self.expand(x))
        s = F.hardsigmoid(self.fc2(F.relu(self.fc1(F.adaptive_avg_pool2d(x, 1)))))
        return self.project(x * s)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, expanded, out_channels]
