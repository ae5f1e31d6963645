"""Small DenseNet for 64x64 images: stem, three dense blocks (4 layers, growth 24) with transitions, BN-ReLU, pool, FC."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
image_size = 64
num_classes = 100
growth = 24


class Layer(nn.Module):
    def __init__(self, cin, growth):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, 4 * growth, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(4 * growth)
        self.conv2 = nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False)

    def forward(self, x):
        out = self.conv1(F.relu(self.bn1(x)))
        out = self.conv2(F.relu(self.bn2(out)))
        return torch.cat([x, out], 1)


class Transition(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.bn = nn.BatchNorm2d(cin)
        self.conv = nn.Conv2d(cin, cout, 1, bias=False)

    def forward(self, x):
        return F.avg_pool2d(self.conv(F.relu(self.bn(x))), 2)


class Model(nn.Module):
    def __init__(self, growth, num_classes, layers_per_block=4):
        super().__init__()
        c = 2 * growth
        self.stem = nn.Conv2d(3, c, 3, padding=1, bias=False)
        blocks = []
        for b in range(3):
            for _ in range(layers_per_block):
                blocks.append(Layer(c, growth))
                c += growth
            if b < 2:
                blocks.append(Transition(c, c // 2))
                c //= 2
        self.blocks = nn.Sequential(*blocks)
        self.bn = nn.BatchNorm2d(c)
        self.fc = nn.Linear(c, num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = F.adaptive_avg_pool2d(F.relu(self.bn(x)), 1).flatten(1)
        return self.fc(x)


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [growth, num_classes]
