"""Quantization-aware linear: x W^T + b, then fake-quantize the output (divide by scale, round, clamp to int8, rescale)."""

import torch
import torch.nn as nn

batch_size = 4096
in_features = 2048
out_features = 2048


class Model(nn.Module):
    def __init__(self, in_features, out_features, act_scale):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.act_scale = act_scale

    def forward(self, x):
        y = self.fc(x)
        q = torch.clamp(torch.round(y / self.act_scale), -128, 127)
        return q * self.act_scale


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, 0.02]
