import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin=16, cout=32, groups=4):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())
        self.b = nn.Sequential(nn.Conv2d(cout, cout, 3, stride=2, padding=1, groups=groups, bias=False), nn.BatchNorm2d(cout), nn.ReLU())
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(cout, 8, 1), nn.ReLU(), nn.Conv2d(8, cout, 1), nn.Sigmoid())
        self.c = nn.Sequential(nn.Conv2d(cout, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=2, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = self.b(self.a(x))
        h = self.c(h * self.se(h))
        return torch.relu(h + self.proj(x))


def get_inputs():
    return [torch.randn(2, 16, 12, 12)]


def get_init_inputs():
    return []
