"""Local window attention: partition a (B, H, W, C) map into 8x8 windows, attention inside each window, merge windows back."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
resolution = 64
channels = 192
window = 8
heads = 6


class Model(nn.Module):
    def __init__(self, channels, window, heads):
        super().__init__()
        self.window = window
        self.heads = heads
        self.qkv = nn.Linear(channels, 3 * channels)
        self.proj = nn.Linear(channels, channels)

    def forward(self, x):
        B, H, W, C = x.shape
        ws = self.window
        win = x.view(B, H // ws, ws, W // ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C)
        qkv = self.qkv(win).reshape(win.shape[0], ws * ws, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        out = self.proj(out.transpose(1, 2).reshape(-1, ws * ws, C))
        out = out.view(B, H // ws, W // ws, ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, C)
        return out


def get_inputs():
    return [torch.randn(batch_size, resolution, resolution, channels)]


def get_init_inputs():
    return [channels, window, heads]
