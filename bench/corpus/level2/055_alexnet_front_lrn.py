"""Early CNN front end: Conv2d 11x11 stride 4, ReLU, LocalResponseNorm, 3x3 stride-2 max pool."""

import torch
import torch.nn as nn

batch_size = 128
image_size = 227


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 96, kernel_size=11, stride=4)
        self.norm1 = nn.LocalResponseNorm(size=5, alpha=1e-4, beta=0.75, k=2.0)
        self.pool1 = nn.MaxPool2d(kernel_size=3, stride=2)

    def forward(self, x):
        return self.pool1(self.norm1(torch.relu(self.conv1(x))))


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return []
