"""Multi-class hinge loss (nn.MultiMarginLoss, p=1, margin=1)."""

import torch
import torch.nn as nn

batch_size = 16384
num_classes = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.criterion = nn.MultiMarginLoss()

    def forward(self, scores, target):
        return self.criterion(scores, target)


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []
