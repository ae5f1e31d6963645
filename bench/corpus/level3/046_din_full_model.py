"""Deep interest network: user-behavior and candidate embeddings, local activation unit attention, concat with profile features, MLP with PReLU, sigmoid."""

import torch
import torch.nn as nn

batch_size = 4096
history_len = 100
num_items = 400000
num_cates = 5000
embed_dim = 32
profile_dim = 64


class Model(nn.Module):
    def __init__(self, num_items, num_cates, embed_dim, profile_dim):
        super().__init__()
        self.item_emb = nn.Embedding(num_items, embed_dim, padding_idx=0)
        self.cate_emb = nn.Embedding(num_cates, embed_dim, padding_idx=0)
        d = 2 * embed_dim
        self.att = nn.Sequential(nn.Linear(4 * d, 64), nn.PReLU(), nn.Linear(64, 16), nn.PReLU(), nn.Linear(16, 1))
        self.mlp = nn.Sequential(
            nn.Linear(2 * d + profile_dim, 200), nn.BatchNorm1d(200), nn.PReLU(200),
            nn.Linear(200, 80), nn.BatchNorm1d(80), nn.PReLU(80), nn.Linear(80, 1),
        )

    def forward(self, hist_items, hist_cates, cand_item, cand_cate, profile):
        keys = torch.cat([self.item_emb(hist_items), self.cate_emb(hist_cates)], dim=-1)
        query = torch.cat([self.item_emb(cand_item), self.cate_emb(cand_cate)], dim=-1)
        q = query.unsqueeze(1).expand_as(keys)
        w = self.att(torch.cat([q, keys, q - keys, q * keys], dim=-1)).squeeze(-1)
        w = w.masked_fill(hist_items == 0, 0.0)
        interest = torch.bmm(w.unsqueeze(1), keys).squeeze(1)
        return torch.sigmoid(self.mlp(torch.cat([interest, query, profile], dim=-1)))


def get_inputs():
    hist_items = torch.randint(1, num_items, (batch_size, history_len))
    hist_items[:, 80:] = 0
    hist_cates = torch.randint(1, num_cates, (batch_size, history_len))
    return [hist_items, hist_cates, torch.randint(1, num_items, (batch_size,)),
            torch.randint(1, num_cates, (batch_size,)), torch.randn(batch_size, profile_dim)]


def get_init_inputs():
    return [num_items, num_cates, embed_dim, profile_dim]
