"""ResNet basic block with a strided 1x1 projection shortcut (two 3x3 conv + BN, ReLU, residual add)."""

import torch
import torch.nn as nn

batch_size = 32
in_planes = 128
planes = 256
height = width = 56


class Model(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=2):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential(
            nn.Conv2d(in_planes, planes, kernel_size=1, stride=stride, bias=False),
            nn.BatchNorm2d(planes),
        )

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = out + self.shortcut(x)
        return torch.relu(out)


def get_inputs():
    return [torch.randn(batch_size, in_planes, height, width)]


def get_init_inputs():
    return [in_planes, planes]
