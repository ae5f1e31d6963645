"""Two-level 3D UNet: Conv3d double convs with BatchNorm3d, MaxPool3d, ConvTranspose3d upsampling, skip concatenation, 1x1x1 head."""

import torch
import torch.nn as nn

batch_size = 2
in_channels = 1
n_classes = 3
volume_shape = (64, 96, 96)


def block(cin, cout):
    return nn.Sequential(
        nn.Conv3d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm3d(cout), nn.ReLU(inplace=True),
        nn.Conv3d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm3d(cout), nn.ReLU(inplace=True),
    )


class Model(nn.Module):
    def __init__(self, in_channels, n_classes, f=16):
        super().__init__()
        self.e1, self.e2, self.mid = block(in_channels, f), block(f, 2 * f), block(2 * f, 4 * f)
        self.pool = nn.MaxPool3d(2)
        self.u2, self.d2 = nn.ConvTranspose3d(4 * f, 2 * f, 2, stride=2), block(4 * f, 2 * f)
        self.u1, self.d1 = nn.ConvTranspose3d(2 * f, f, 2, stride=2), block(2 * f, f)
        self.head = nn.Conv3d(f, n_classes, 1)

    def forward(self, vol):
        a = self.e1(vol)
        b = self.e2(self.pool(a))
        c = self.mid(self.pool(b))
        x = self.d2(torch.cat([self.u2(c), b], 1))
        x = self.d1(torch.cat([self.u1(x), a], 1))
        return self.head(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, *volume_shape)]


def get_init_inputs():
    return [in_channels, n_classes]
