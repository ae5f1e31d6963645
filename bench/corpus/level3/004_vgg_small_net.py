"""VGG-style network for 64x64 images: stacks of 3x3 conv + ReLU with max pooling, then a 3-layer classifier with dropout."""

import torch
import torch.nn as nn

batch_size = 64
input_shape = (3, 64, 64)
num_classes = 200

cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M"]


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        layers = []
        c = 3
        for v in cfg:
            if v == "M":
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            else:
                layers += [nn.Conv2d(c, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
                c = v
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(
            nn.Linear(512 * 4 * 4, 2048), nn.ReLU(True), nn.Dropout(),
            nn.Linear(2048, 2048), nn.ReLU(True), nn.Dropout(),
            nn.Linear(2048, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x.view(x.size(0), -1))


def get_inputs():
    return [torch.randn(batch_size, *input_shape)]


def get_init_inputs():
    return [num_classes]
