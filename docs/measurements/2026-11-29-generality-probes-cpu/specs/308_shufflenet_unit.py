import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, cin=24, cout=24, groups=3):
        super().__init__()
        mid = cout // 4
        self.groups = groups
        self.conv1 = nn.Conv2d(cin, mid, 1, groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, padding=1, groups=mid, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, cout, 1, groups=groups, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        b, c, h, w = out.size()
        out = out.view(b, self.groups, c // self.groups, h, w).transpose(1, 2).contiguous().view(b, -1, h, w)
        out = self.bn2(self.conv2(out))
        out = F.relu(self.bn3(self.conv3(out)))
        return out + x


def get_inputs():
    return [torch.randn(2, 24, 10, 10)]


def get_init_inputs():
    return []
