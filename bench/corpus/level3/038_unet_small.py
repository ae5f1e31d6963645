"""UNet for 128x128 images: 4-level encoder of double convs with max pooling, bottleneck, decoder with ConvTranspose2d and skip concatenation, 1x1 head."""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 3
out_channels = 2
height = width = 128
features = 32


def double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, features):
        super().__init__()
        f = features
        self.enc1, self.enc2 = double_conv(in_channels, f), double_conv(f, 2 * f)
        self.enc3, self.enc4 = double_conv(2 * f, 4 * f), double_conv(4 * f, 8 * f)
        self.pool = nn.MaxPool2d(2, 2)
        self.bottleneck = double_conv(8 * f, 16 * f)
        self.up4, self.dec4 = nn.ConvTranspose2d(16 * f, 8 * f, 2, 2), double_conv(16 * f, 8 * f)
        self.up3, self.dec3 = nn.ConvTranspose2d(8 * f, 4 * f, 2, 2), double_conv(8 * f, 4 * f)
        self.up2, self.dec2 = nn.ConvTranspose2d(4 * f, 2 * f, 2, 2), double_conv(4 * f, 2 * f)
        self.up1, self.dec1 = nn.ConvTranspose2d(2 * f, f, 2, 2), double_conv(2 * f, f)
        self.head = nn.Conv2d(f, out_channels, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        e3 = self.enc3(self.pool(e2))
        e4 = self.enc4(self.pool(e3))
        b = self.bottleneck(self.pool(e4))
        d4 = self.dec4(torch.cat((self.up4(b), e4), dim=1))
        d3 = self.dec3(torch.cat((self.up3(d4), e3), dim=1))
        d2 = self.dec2(torch.cat((self.up2(d3), e2), dim=1))
        d1 = self.dec1(torch.cat((self.up1(d2), e1), dim=1))
        return self.head(d1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, features]
