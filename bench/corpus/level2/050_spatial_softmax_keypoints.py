"""Spatial soft-argmax: 1x1 Conv2d to K keypoint maps, softmax over pixels, expected (x, y) coordinates."""

import torch
import torch.nn as nn

batch_size = 256
in_channels = 128
num_keypoints = 32
height = width = 64


class Model(nn.Module):
    def __init__(self, in_channels, num_keypoints, height, width):
        super().__init__()
        self.keypoint_conv = nn.Conv2d(in_channels, num_keypoints, kernel_size=1)
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, height), torch.linspace(-1, 1, width), indexing="ij")
        self.register_buffer("pos", torch.stack([xs.reshape(-1), ys.reshape(-1)], dim=1))

    def forward(self, features):
        maps = self.keypoint_conv(features)
        b, k, h, w = maps.shape
        attn = torch.softmax(maps.view(b, k, h * w), dim=-1)
        return attn @ self.pos


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, num_keypoints, height, width]
