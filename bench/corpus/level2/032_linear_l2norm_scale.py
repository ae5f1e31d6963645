"""Embedding projection, L2 normalization, multiply by a learned temperature (contrastive head)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32768
feat_dim = 2048
embed_dim = 512


class Model(nn.Module):
    def __init__(self, feat_dim, embed_dim):
        super().__init__()
        self.proj = nn.Linear(feat_dim, embed_dim, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, feats):
        z = F.normalize(self.proj(feats), dim=-1)
        return z * self.logit_scale.exp()


def get_inputs():
    return [torch.randn(batch_size, feat_dim)]


def get_init_inputs():
    return [feat_dim, embed_dim]
