import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin=16):
        super().__init__()
        self.b1 = nn.Conv2d(cin, 8, 1)
        self.b2 = nn.Sequential(nn.Conv2d(cin, 6, 1), nn.Conv2d(6, 12, 3, padding=1))
        self.b3 = nn.Sequential(nn.Conv2d(cin, 4, 1), nn.Conv2d(4, 6, 5, padding=2))
        self.b4 = nn.Sequential(nn.MaxPool2d(3, stride=1, padding=1), nn.Conv2d(cin, 6, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b2(x), self.b3(x), self.b4(x)], 1)


def get_inputs():
    return [torch.randn(2, 16, 13, 13)]


def get_init_inputs():
    return []
