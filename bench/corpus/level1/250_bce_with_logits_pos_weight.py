"""Multi-label BCE-with-logits loss with a per-class positive weight."""

import torch
import torch.nn as nn

batch_size = 16384
num_labels = 2048


class Model(nn.Module):
    def __init__(self, num_labels):
        super().__init__()
        self.criterion = nn.BCEWithLogitsLoss(pos_weight=torch.full((num_labels,), 3.0))

    def forward(self, logits, labels):
        return self.criterion(logits, labels)


def get_inputs():
    return [torch.randn(batch_size, num_labels) * 4, (torch.rand(batch_size, num_labels) < 0.05).float()]


def get_init_inputs():
    return [num_labels]
