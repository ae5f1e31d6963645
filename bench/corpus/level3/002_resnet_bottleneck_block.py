"""ResNet bottleneck block (1x1 reduce, 3x3, 1x1 expand x4) with identity shortcut."""

import torch
import torch.nn as nn

batch_size = 32
inplanes = 1024
planes = 256
spatial = 14


class Model(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += identity
        return self.relu(out)


def get_inputs():
    return [torch.randn(batch_size, inplanes, spatial, spatial)]


def get_init_inputs():
    return [inplanes, planes]
