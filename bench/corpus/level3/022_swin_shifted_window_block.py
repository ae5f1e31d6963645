"""Swin-style block: LayerNorm, cyclic shift, 7x7 window attention with relative position bias and shift mask, reverse shift, MLP."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
resolution = 56
dim = 96
num_heads = 3
window_size = 7
shift_size = 3


def window_partition(x, ws):
    B, H, W, C = x.shape
    x = x.view(B, H // ws, ws, W // ws, ws, C)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C)


def window_reverse(windows, ws, H, W):
    B = windows.shape[0] // ((H // ws) * (W // ws))
    x = windows.view(B, H // ws, W // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, -1)


class Model(nn.Module):
    def __init__(self, dim, resolution, num_heads, window_size, shift_size):
        super().__init__()
        self.res, self.ws, self.shift, self.heads = resolution, window_size, shift_size, num_heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.relative_position_bias_table = nn.Parameter(torch.randn((2 * window_size - 1) ** 2, num_heads) * 0.02)
        coords = torch.stack(torch.meshgrid(torch.arange(window_size), torch.arange(window_size), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (window_size - 1)
        self.register_buffer("relative_position_index", rel[..., 0] * (2 * window_size - 1) + rel[..., 1])
        img_mask = torch.zeros(1, resolution, resolution, 1)
        cnt = 0
        for hs in (slice(0, -window_size), slice(-window_size, -shift_size), slice(-shift_size, None)):
            for wsl in (slice(0, -window_size), slice(-window_size, -shift_size), slice(-shift_size, None)):
                img_mask[:, hs, wsl, :] = cnt
                cnt += 1
        mw = window_partition(img_mask, window_size).squeeze(-1)
        mask = mw.unsqueeze(1) - mw.unsqueeze(2)
        self.register_buffer("attn_mask", mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0))

    def forward(self, x):
        B, L, C = x.shape
        H = W = self.res
        shortcut = x
        x = torch.roll(self.norm1(x).view(B, H, W, C), shifts=(-self.shift, -self.shift), dims=(1, 2))
        win = window_partition(x, self.ws)
        nW, N = self.attn_mask.shape[0], self.ws * self.ws
        q, k, v = self.qkv(win).reshape(-1, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        attn = (q * (C // self.heads) ** -0.5) @ k.transpose(-2, -1)
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(N, N, -1).permute(2, 0, 1)
        attn = attn + bias.unsqueeze(0)
        attn = attn.view(-1, nW, self.heads, N, N) + self.attn_mask.unsqueeze(1).unsqueeze(0)
        attn = F.softmax(attn.view(-1, self.heads, N, N), dim=-1)
        out = self.proj((attn @ v).transpose(1, 2).reshape(-1, N, C))
        x = torch.roll(window_reverse(out, self.ws, H, W), shifts=(self.shift, self.shift), dims=(1, 2))
        x = shortcut + x.reshape(B, L, C)
        return x + self.mlp(self.norm2(x))


def get_inputs():
    return [torch.randn(batch_size, resolution * resolution, dim)]


def get_init_inputs():
    return [dim, resolution, num_heads, window_size, shift_size]
