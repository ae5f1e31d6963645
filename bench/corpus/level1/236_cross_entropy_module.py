"""nn.CrossEntropyLoss (mean) of image-classifier logits against integer labels."""

import torch
import torch.nn as nn

batch = 8192
num_classes = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.criterion = nn.CrossEntropyLoss()

    def forward(self, logits, labels):
        return self.criterion(logits, labels)


def get_inputs():
    return [torch.randn(batch, num_classes) * 2, torch.randint(0, num_classes, (batch,))]


def get_init_inputs():
    return []
