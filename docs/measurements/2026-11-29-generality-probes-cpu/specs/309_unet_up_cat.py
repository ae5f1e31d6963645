import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.down = nn.Conv2d(3, c, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.mid = nn.Conv2d(c, 2 * c, 3, padding=1)
        self.up = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.out = nn.Conv2d(2 * c, 2, 1)

    def forward(self, x):
        d = F.relu(self.down(x))
        m = F.relu(self.mid(self.pool(d)))
        u = self.up(m)
        u = F.interpolate(u, size=d.shape[-2:], mode="bilinear", align_corners=False)
        return torch.softmax(self.out(torch.cat([d, u], 1)), dim=1)


def get_inputs():
    return [torch.randn(2, 3, 15, 15)]


def get_init_inputs():
    return []
