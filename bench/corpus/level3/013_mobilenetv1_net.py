"""MobileNet (v1) with width multiplier 0.75: strided stem, 13 depthwise-separable conv+BN+ReLU layers, pool, FC."""

import torch
import torch.nn as nn

batch_size = 64
image_size = 224
num_classes = 1000
alpha = 0.75


def conv_bn(inp, oup, stride):
    return nn.Sequential(nn.Conv2d(inp, oup, 3, stride, 1, bias=False), nn.BatchNorm2d(oup), nn.ReLU(inplace=True))


def conv_dw(inp, oup, stride):
    return nn.Sequential(
        nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False), nn.BatchNorm2d(inp), nn.ReLU(inplace=True),
        nn.Conv2d(inp, oup, 1, 1, 0, bias=False), nn.BatchNorm2d(oup), nn.ReLU(inplace=True),
    )


class Model(nn.Module):
    def __init__(self, num_classes, alpha):
        super().__init__()
        c = lambda n: int(n * alpha)
        plan = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
        layers = [conv_bn(3, c(32), 2)]
        cin = c(32)
        for cout, s in plan:
            layers.append(conv_dw(cin, c(cout), s))
            cin = c(cout)
        self.model = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        return self.fc(self.model(x).flatten(1))


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [num_classes, alpha]
