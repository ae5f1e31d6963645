"""EfficientNet MBConv block: 1x1 expand + BN + SiLU, depthwise 5x5 + BN + SiLU, squeeze-excitation, 1x1 project + BN, residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 80
height = width = 28
expand_ratio = 6
se_ratio = 0.25


class Model(nn.Module):
    def __init__(self, channels, expand_ratio, se_ratio, kernel_size=5):
        super().__init__()
        mid = channels * expand_ratio
        squeezed = max(1, int(channels * se_ratio))
        self.expand = nn.Conv2d(channels, mid, 1, bias=False)
        self.bn0 = nn.BatchNorm2d(mid, eps=1e-3, momentum=0.01)
        self.depthwise = nn.Conv2d(mid, mid, kernel_size, padding=kernel_size // 2, groups=mid, bias=False)
        self.bn1 = nn.BatchNorm2d(mid, eps=1e-3, momentum=0.01)
        self.se_reduce = nn.Conv2d(mid, squeezed, 1)
        self.se_expand = nn.Conv2d(squeezed, mid, 1)
        self.project = nn.Conv2d(mid, channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels, eps=1e-3, momentum=0.01)

    def forward(self, inputs):
        x = F.silu(self.bn0(self.expand(inputs)))
        x = F.silu(self.bn1(self.depthwise(x)))
        s = F.adaptive_avg_pool2d(x, 1)
        s = self.se_expand(F.silu(self.se_reduce(s)))
        x = x * torch.sigmoid(s)
        x = self.bn2(self.project(x))
        return x + inputs


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, expand_ratio, se_ratio]
