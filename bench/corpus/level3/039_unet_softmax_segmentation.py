"""Three-level UNet with GroupNorm + SiLU double convs, strided-conv downsampling, transposed-conv upsampling, per-pixel softmax."""

import torch
import torch.nn as nn

batch_size = 16
channels = 1
num_classes = 4
image_size = 192
base = 48


class DoubleConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(8, cout), nn.SiLU(),
            nn.Conv2d(cout, cout, 3, padding=1), nn.GroupNorm(8, cout), nn.SiLU(),
        )

    def forward(self, x):
        return self.net(x)


class Model(nn.Module):
    def __init__(self, channels, num_classes, base):
        super().__init__()
        self.inc = DoubleConv(channels, base)
        self.down1 = nn.Sequential(nn.Conv2d(base, base, 3, 2, 1), DoubleConv(base, 2 * base))
        self.down2 = nn.Sequential(nn.Conv2d(2 * base, 2 * base, 3, 2, 1), DoubleConv(2 * base, 4 * base))
        self.up2 = nn.ConvTranspose2d(4 * base, 2 * base, 3, stride=2, padding=1, output_padding=1)
        self.conv2 = DoubleConv(4 * base, 2 * base)
        self.up1 = nn.ConvTranspose2d(2 * base, base, 3, stride=2, padding=1, output_padding=1)
        self.conv1 = DoubleConv(2 * base, base)
        self.outc = nn.Conv2d(base, num_classes, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        y = self.conv2(torch.cat([x2, self.up2(x3)], 1))
        y = self.conv1(torch.cat([x1, self.up1(y)], 1))
        return torch.softmax(self.outc(y), dim=1)


def get_inputs():
    return [torch.randn(batch_size, channels, image_size, image_size)]


def get_init_inputs():
    return [channels, num_classes, base]
