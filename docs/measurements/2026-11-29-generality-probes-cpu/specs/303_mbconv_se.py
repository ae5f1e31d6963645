import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, cin=16, expand=4, cout=24):
        super().__init__()
        mid = cin * expand
        self.expand = nn.Sequential(nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU())
        self.dw = nn.Sequential(nn.Conv2d(mid, mid, 5, stride=2, padding=2, groups=mid, bias=False), nn.BatchNorm2d(mid), nn.SiLU())
        self.se_reduce = nn.Conv2d(mid, cin // 4, 1)
        self.se_expand = nn.Conv2d(cin // 4, mid, 1)
        self.project = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = self.dw(self.expand(x))
        s = torch.sigmoid(self.se_expand(F.silu(self.se_reduce(F.adaptive_avg_pool2d(h, 1)))))
        return self.project(h * s)


def get_inputs():
    return [torch.randn(2, 16, 16, 16)]


def get_init_inputs():
    return []
