"""huber_loss delta=2.0 between two matrices, reduction=mean (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 29536
num_classes = 2048


class Model(nn.Module):
    def forward(self, pred, target):
        return F.huber_loss(pred, target, delta=2.0, reduction="mean")


def get_inputs():
    return [torch.randn(batch_size, num_classes) * 2, torch.randn(batch_size, num_classes)]


def get_init_inputs():
    return []
