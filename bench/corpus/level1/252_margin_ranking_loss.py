"""Margin ranking loss between two score vectors with +-1 preference labels."""

import torch
import torch.nn as nn

num_pairs = 4 * 1024 * 1024


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.loss = nn.MarginRankingLoss(margin=margin)

    def forward(self, pos_scores, neg_scores, y):
        return self.loss(pos_scores, neg_scores, y)


def get_inputs():
    y = torch.randint(0, 2, (num_pairs,)).float() * 2 - 1
    return [torch.randn(num_pairs), torch.randn(num_pairs), y]


def get_init_inputs():
    return [0.2]
