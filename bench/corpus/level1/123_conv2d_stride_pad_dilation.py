"""2D convolution with stride (2, 1), padding (2, 4), dilation (2, 4), no bias."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
kernel_size = 3
height = 256
width = 256
stride = (2, 1)
padding = (2, 4)
dilation = (2, 4)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation):
        super().__init__()
        self.atrous = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                dilation=dilation, bias=False)

    def forward(self, x):
        return self.atrous(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
