"""Triplet margin loss with p=1, margin 0.3 and the distance swap, on face-embedding triplets."""

import torch
import torch.nn as nn
import torch.nn.functional as F

num_triplets = 16384
embed_dim = 256


class Model(nn.Module):
    def forward(self, anchor_emb, pos_emb, neg_emb):
        return F.triplet_margin_loss(anchor_emb, pos_emb, neg_emb, margin=0.3, p=1, swap=True)


def get_inputs():
    anchor = torch.randn(num_triplets, embed_dim)
    return [anchor, anchor + 0.3 * torch.randn(num_triplets, embed_dim), torch.randn(num_triplets, embed_dim)]


def get_init_inputs():
    return []
