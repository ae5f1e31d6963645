"""Negative log-likelihood loss (sum reduction) on log-probabilities."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 65536
num_classes = 512


class Model(nn.Module):
    def forward(self, log_probs, target):
        return F.nll_loss(log_probs, target, reduction="sum")


def get_inputs():
    return [torch.randn(batch_size, num_classes).log_softmax(dim=1), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []
