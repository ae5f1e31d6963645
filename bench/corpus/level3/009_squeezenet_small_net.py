"""SqueezeNet-style network: conv stem, eight fire modules with ceil-mode max pools, 1x1 conv classifier, global average pool."""

import torch
import torch.nn as nn

batch_size = 32
height = width = 224
num_classes = 1000


class Fire(nn.Module):
    def __init__(self, cin, s, e):
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(cin, s, 1), nn.ReLU(inplace=True))
        self.e1 = nn.Sequential(nn.Conv2d(s, e, 1), nn.ReLU(inplace=True))
        self.e3 = nn.Sequential(nn.Conv2d(s, e, 3, padding=1), nn.ReLU(inplace=True))

    def forward(self, x):
        x = self.squeeze(x)
        return torch.cat([self.e1(x), self.e3(x)], 1)


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=3, stride=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(64, 16, 64), Fire(128, 16, 64),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(128, 32, 128), Fire(256, 32, 128),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(256, 48, 192), Fire(384, 48, 192), Fire(384, 64, 256), Fire(512, 64, 256),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.5), nn.Conv2d(512, num_classes, 1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1))
        )

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


def get_inputs():
    return [torch.randn(batch_size, 3, height, width)]


def get_init_inputs():
    return [num_classes]
