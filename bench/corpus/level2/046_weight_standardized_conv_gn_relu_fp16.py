"""Weight-standardized Conv2d (weights normalized per output filter in the forward), GroupNorm, ReLU, fp16."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 128
out_channels = 128
height = width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, 3, 3, dtype=torch.float16) * 0.05)
        self.gn = nn.GroupNorm(32, out_channels, dtype=torch.float16)

    def forward(self, x):
        w = self.weight.float()
        mean = w.mean(dim=(1, 2, 3), keepdim=True)
        var = w.var(dim=(1, 2, 3), keepdim=True, unbiased=False)
        w = ((w - mean) / torch.sqrt(var + 1e-10)).to(x.dtype)
        return F.relu(self.gn(F.conv2d(x, w, padding=1)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return [in_channels, out_channels]
