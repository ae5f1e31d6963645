"""Triplet margin loss (margin 0.3, p=1.0), reduction=sum (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
num_classes = 1871


class Model(nn.Module):
    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=0.3, p=1.0, reduction="sum")


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randn(batch_size, num_classes), torch.randn(batch_size, num_classes)]


def get_init_inputs():
    return []
