"""Swin-V2 window attention: scaled cosine attention with a clamped learned logit scale, and a relative position bias from a small MLP over log-spaced coordinates (built with NumPy's scalar math in __init__)."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

num_windows = 512
window = 8
dim = 128
num_heads = 4


class Model(nn.Module):
    def __init__(self, dim, window, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.logit_scale = nn.Parameter(torch.log(10 * torch.ones((num_heads, 1, 1))))
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 512, bias=True), nn.ReLU(inplace=True),
                                     nn.Linear(512, num_heads, bias=False))
        steps = torch.arange(-(window - 1), window, dtype=torch.float32)
        table = torch.stack(torch.meshgrid([steps, steps], indexing="ij")).permute(1, 2, 0).contiguous().unsqueeze(0)
        table = table / (window - 1) * 8
        table = torch.sign(table) * torch.log2(torch.abs(table) + 1.0) / np.log2(8)
        self.register_buffer("coords_table", table)
        coords = torch.stack(torch.meshgrid([torch.arange(window), torch.arange(window)], indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += window - 1
        rel[:, :, 1] += window - 1
        rel[:, :, 0] *= 2 * window - 1
        self.register_buffer("relative_index", rel.sum(-1))
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.q_bias = nn.Parameter(torch.zeros(dim))
        self.v_bias = nn.Parameter(torch.zeros(dim))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B_, N, C = x.shape
        qkv_bias = torch.cat((self.q_bias, torch.zeros_like(self.v_bias, requires_grad=False), self.v_bias))
        qkv = F.linear(input=x, weight=self.qkv.weight, bias=qkv_bias)
        q, k, v = qkv.reshape(B_, N, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        scale = torch.clamp(self.logit_scale, max=torch.log(torch.tensor(1.0 / 0.01, device=x.device))).exp()
        attn = attn * scale
        bias = self.cpb_mlp(self.coords_table).view(-1, self.num_heads)[self.relative_index.view(-1)]
        attn = attn + 16 * torch.sigmoid(bias.view(N, N, -1).permute(2, 0, 1)).unsqueeze(0)
        attn = F.softmax(attn, dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(B_, N, C))


def get_inputs():
    return [torch.randn(num_windows, window * window, dim)]


def get_init_inputs():
    return [dim, window, num_heads]
