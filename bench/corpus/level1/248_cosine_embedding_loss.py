"""Cosine embedding loss (margin 0.1) between paired text and image embeddings with +1/-1 labels."""

import torch
import torch.nn as nn
import torch.nn.functional as F

num_pairs = 65536
dim = 512


class Model(nn.Module):
    def forward(self, text_emb, image_emb, target):
        return F.cosine_embedding_loss(text_emb, image_emb, target, margin=0.1)


def get_inputs():
    target = torch.randint(0, 2, (num_pairs,)).float() * 2 - 1
    return [torch.randn(num_pairs, dim), torch.randn(num_pairs, dim), target]


def get_init_inputs():
    return []
