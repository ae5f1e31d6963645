"""Scores every item for one user: item table (2M x 128) times a user vector with torch.mv."""

import torch
import torch.nn as nn

num_items = 2_000_000
embed_dim = 128


class Model(nn.Module):
    def forward(self, item_table, user_vec):
        return torch.mv(item_table, user_vec)


def get_inputs():
    return [torch.randn(num_items, embed_dim), torch.randn(embed_dim)]


def get_init_inputs():
    return []
