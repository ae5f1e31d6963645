"""MobileNetV3-style classifier: Linear, Hardswish, Dropout (eval), Linear to 1000 classes."""

import torch
import torch.nn as nn

batch_size = 2048
in_features = 960
last_channel = 1280
num_classes = 1000


class Model(nn.Module):
    def __init__(self, in_features, last_channel, num_classes):
        super().__init__()
        self.classifier = nn.Sequential(
            nn.Linear(in_features, last_channel),
            nn.Hardswish(inplace=True),
            nn.Dropout(p=0.2, inplace=True),
            nn.Linear(last_channel, num_classes),
        )

    def forward(self, pooled):
        return self.classifier(pooled)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, last_channel, num_classes]
