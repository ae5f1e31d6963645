"""EfficientNet-style network: SiLU stem, MBConv stages with squeeze-excitation (kernels 3/5, strides 1/2), 1x1 head, pool, FC."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
img_size = 224
num_classes = 1000


class MBConv(nn.Module):
    def __init__(self, cin, cout, k, s, t):
        super().__init__()
        mid = cin * t
        self.use_res = s == 1 and cin == cout
        self.expand = nn.Sequential(nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU()) if t != 1 else nn.Identity()
        self.dw = nn.Sequential(nn.Conv2d(mid, mid, k, s, k // 2, groups=mid, bias=False), nn.BatchNorm2d(mid), nn.SiLU())
        sq = max(1, cin // 4)
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(mid, sq, 1), nn.SiLU(), nn.Conv2d(sq, mid, 1), nn.Sigmoid())
        self.project = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = self.dw(self.expand(x))
        h = self.project(h * self.se(h))
        return x + h if self.use_res else h


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        stages = [(1, 16, 1, 3, 1), (6, 24, 2, 3, 2), (6, 40, 2, 5, 2), (6, 80, 3, 3, 2), (6, 112, 3, 5, 1),
                  (6, 192, 4, 5, 2), (6, 320, 1, 3, 1)]
        layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.SiLU()]
        cin = 32
        for t, c, n, k, s in stages:
            for i in range(n):
                layers.append(MBConv(cin, c, k, s if i == 0 else 1, t))
                cin = c
        layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.SiLU()]
        self.features = nn.Sequential(*layers)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(1280, num_classes)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 1).flatten(1)
        return self.fc(self.dropout(x))


def get_inputs():
    return [torch.randn(batch_size, 3, img_size, img_size)]


def get_init_inputs():
    return [num_classes]
