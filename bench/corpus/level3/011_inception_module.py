"""Inception module: 1x1, 1x1->3x3, 1x1->5x5 and 3x3 maxpool->1x1 branches (conv+BN+ReLU), concatenated."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
height = width = 28


def conv_bn(cin, cout, k, p=0):
    return nn.Sequential(nn.Conv2d(cin, cout, k, padding=p, bias=False), nn.BatchNorm2d(cout, eps=0.001), nn.ReLU(True))


class Model(nn.Module):
    def __init__(self, in_channels, ch1x1=128, ch3x3red=128, ch3x3=192, ch5x5red=32, ch5x5=96, pool_proj=64):
        super().__init__()
        self.branch1 = conv_bn(in_channels, ch1x1, 1)
        self.branch2 = nn.Sequential(conv_bn(in_channels, ch3x3red, 1), conv_bn(ch3x3red, ch3x3, 3, 1))
        self.branch3 = nn.Sequential(conv_bn(in_channels, ch5x5red, 1), conv_bn(ch5x5red, ch5x5, 5, 2))
        self.branch4 = nn.Sequential(nn.MaxPool2d(3, stride=1, padding=1), conv_bn(in_channels, pool_proj, 1))

    def forward(self, x):
        return torch.cat([self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)], 1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels]
