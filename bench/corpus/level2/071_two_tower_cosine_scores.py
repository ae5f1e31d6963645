"""Two-tower retrieval: user and item MLP towers, L2 normalization, in-batch score matrix divided by temperature."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
user_dim = 256
item_dim = 192
out_dim = 128


class Model(nn.Module):
    def __init__(self, user_dim, item_dim, out_dim, temperature=0.05):
        super().__init__()
        self.user_tower = nn.Sequential(nn.Linear(user_dim, 512), nn.ReLU(), nn.Linear(512, out_dim))
        self.item_tower = nn.Sequential(nn.Linear(item_dim, 512), nn.ReLU(), nn.Linear(512, out_dim))
        self.temperature = temperature

    def forward(self, user_feats, item_feats):
        u = F.normalize(self.user_tower(user_feats), dim=-1)
        v = F.normalize(self.item_tower(item_feats), dim=-1)
        return u @ v.t() / self.temperature


def get_inputs():
    return [torch.randn(batch_size, user_dim), torch.randn(batch_size, item_dim)]


def get_init_inputs():
    return [user_dim, item_dim, out_dim]
