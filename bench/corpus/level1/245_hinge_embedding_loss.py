"""Hinge embedding loss (margin 2) on pair distances with +1 (similar) / -1 (dissimilar) labels."""

import torch
import torch.nn as nn

num_pairs = 8 * 1024 * 1024


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.loss = nn.HingeEmbeddingLoss(margin=margin)

    def forward(self, distances, labels):
        return self.loss(distances, labels)


def get_inputs():
    labels = torch.randint(0, 2, (num_pairs,)).float() * 2 - 1
    return [torch.rand(num_pairs) * 4, labels]


def get_init_inputs():
    return [2.0]
