"""VGG-11 with BatchNorm for 32x32 images: conv-BN-ReLU stacks, five max pools, linear classifier."""

import torch
import torch.nn as nn

batch_size = 256
image_size = 32
num_classes = 100


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        plan = [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]
        layers, c = [], 3
        for v in plan:
            if v == "M":
                layers.append(nn.MaxPool2d(2))
            else:
                layers += [nn.Conv2d(c, v, 3, padding=1, bias=False), nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
                c = v
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(512, num_classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [num_classes]
