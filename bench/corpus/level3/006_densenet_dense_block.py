"""DenseNet dense block: 6 layers of BN-ReLU-1x1 conv (bottleneck) and BN-ReLU-3x3 conv, each concatenating growth_rate channels."""

import torch
import torch.nn as nn

batch_size = 32
num_input_features = 128
growth_rate = 32
bn_size = 4
num_layers = 6
height = width = 56


class DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate, bn_size):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, 3, padding=1, bias=False)
        self.drop = nn.Dropout(0.0)

    def forward(self, features):
        h = self.conv1(torch.relu(self.norm1(torch.cat(features, 1))))
        return self.drop(self.conv2(torch.relu(self.norm2(h))))


class Model(nn.Module):
    def __init__(self, num_layers, num_input_features, bn_size, growth_rate):
        super().__init__()
        self.layers = nn.ModuleList(
            [DenseLayer(num_input_features + i * growth_rate, growth_rate, bn_size) for i in range(num_layers)]
        )

    def forward(self, init_features):
        features = [init_features]
        for layer in self.layers:
            features.append(layer(features))
        return torch.cat(features, 1)


def get_inputs():
    return [torch.randn(batch_size, num_input_features, height, width)]


def get_init_inputs():
    return [num_layers, num_input_features, bn_size, growth_rate]
