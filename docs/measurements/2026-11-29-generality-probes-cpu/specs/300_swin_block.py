import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim=32, heads=4, window=4, shift=2):
        super().__init__()
        self.dim, self.heads, self.window, self.shift = dim, heads, window, shift
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.bias_table = nn.Parameter(torch.randn((2 * window - 1) ** 2, heads) * 0.02)
        coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + window - 1
        self.register_buffer("rel_index", rel[..., 0] * (2 * window - 1) + rel[..., 1])

    def forward(self, x):
        B, H, W, C = x.shape
        w = self.window
        h = torch.roll(self.norm(x), shifts=(-self.shift, -self.shift), dims=(1, 2))
        h = h.view(B, H // w, w, W // w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, C)
        q, k, v = self.qkv(h).reshape(h.shape[0], w * w, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5
        att = att + self.bias_table[self.rel_index.view(-1)].view(w * w, w * w, -1).permute(2, 0, 1)
        out = (att.softmax(-1) @ v).transpose(1, 2).reshape(-1, w * w, C)
        out = self.proj(out).view(B, H // w, W // w, w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, C)
        return x + torch.roll(out, shifts=(self.shift, self.shift), dims=(1, 2))


def get_inputs():
    return [torch.randn(2, 8, 8, 32)]


def get_init_inputs():
    return []
