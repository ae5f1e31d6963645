"""Bayesian personalized ranking: gather user, positive and negative item embeddings, score differences, -logsigmoid mean + L2."""

import torch
import torch.nn as nn
import torch.nn.functional as F

num_users = 500000
num_items = 1000000
embed_dim = 64
batch_size = 65536


class Model(nn.Module):
    def __init__(self, num_users, num_items, embed_dim, reg):
        super().__init__()
        self.user_emb = nn.Embedding(num_users, embed_dim)
        self.item_emb = nn.Embedding(num_items, embed_dim)
        self.reg = reg

    def forward(self, users, pos_items, neg_items):
        u = self.user_emb(users)
        i = self.item_emb(pos_items)
        j = self.item_emb(neg_items)
        diff = (u * i).sum(-1) - (u * j).sum(-1)
        l2 = (u.pow(2).sum() + i.pow(2).sum() + j.pow(2).sum()) / users.shape[0]
        return -F.logsigmoid(diff).mean() + self.reg * l2


def get_inputs():
    return [torch.randint(0, num_users, (batch_size,)), torch.randint(0, num_items, (batch_size,)),
            torch.randint(0, num_items, (batch_size,))]


def get_init_inputs():
    return [num_users, num_items, embed_dim, 1e-4]
