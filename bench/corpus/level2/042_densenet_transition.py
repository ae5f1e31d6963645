"""DenseNet transition layer: BatchNorm2d, ReLU, 1x1 Conv2d halving channels, 2x2 average pool."""

import torch
import torch.nn as nn

batch_size = 64
num_input_features = 512
num_output_features = 256
height = width = 56


class Model(nn.Module):
    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)

    def forward(self, x):
        return self.pool(self.conv(self.relu(self.norm(x))))


def get_inputs():
    return [torch.randn(batch_size, num_input_features, height, width)]


def get_init_inputs():
    return [num_input_features, num_output_features]
