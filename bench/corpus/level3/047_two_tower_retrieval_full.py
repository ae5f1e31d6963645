"""Two-tower retrieval model: bag-pooled id features per tower, ReLU MLP towers with LayerNorm, L2-normalized outputs, in-batch logits."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
user_vocab = 1000000
item_vocab = 2000000
emb_dim = 64
user_bag = 50
item_bag = 8
out_dim = 128


class Tower(nn.Module):
    def __init__(self, vocab, emb_dim, out_dim):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, emb_dim, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(emb_dim, 512), nn.ReLU(), nn.LayerNorm(512), nn.Linear(512, out_dim))

    def forward(self, ids):
        return F.normalize(self.mlp(self.bag(ids)), dim=-1)


class Model(nn.Module):
    def __init__(self, user_vocab, item_vocab, emb_dim, out_dim):
        super().__init__()
        self.user = Tower(user_vocab, emb_dim, out_dim)
        self.item = Tower(item_vocab, emb_dim, out_dim)
        self.log_temp = nn.Parameter(torch.tensor(2.0))

    def forward(self, user_ids, item_ids):
        return self.user(user_ids) @ self.item(item_ids).T * self.log_temp.exp()


def get_inputs():
    return [torch.randint(0, user_vocab, (batch_size, user_bag)), torch.randint(0, item_vocab, (batch_size, item_bag))]


def get_init_inputs():
    return [user_vocab, item_vocab, emb_dim, out_dim]
