"""Sequential recommender: item + position embeddings, two causal self-attention blocks (pre-LN), scores of the last state against candidate items."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
max_len = 200
num_items = 500000
hidden = 64
num_heads = 2
num_candidates = 101


class Block(nn.Module):
    def __init__(self, hidden, num_heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden, eps=1e-8)
        self.attn = nn.MultiheadAttention(hidden, num_heads, dropout=0.2, batch_first=True)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-8)
        self.ff = nn.Sequential(nn.Conv1d(hidden, hidden, 1), nn.ReLU(), nn.Dropout(0.2), nn.Conv1d(hidden, hidden, 1))

    def forward(self, x, causal):
        q = self.ln1(x)
        a, _ = self.attn(q, x, x, attn_mask=causal, need_weights=False)
        x = q + a
        y = self.ln2(x)
        return y + self.ff(y.transpose(1, 2)).transpose(1, 2)


class Model(nn.Module):
    def __init__(self, num_items, max_len, hidden, num_heads):
        super().__init__()
        self.item_emb = nn.Embedding(num_items + 1, hidden, padding_idx=0)
        self.pos_emb = nn.Embedding(max_len, hidden)
        self.blocks = nn.ModuleList([Block(hidden, num_heads) for _ in range(2)])
        self.last_ln = nn.LayerNorm(hidden, eps=1e-8)
        self.register_buffer("causal", ~torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, history, candidates):
        T = history.size(1)
        x = self.item_emb(history) * self.item_emb.embedding_dim ** 0.5
        x = x + self.pos_emb(torch.arange(T, device=history.device))[None]
        x = x * (history != 0).unsqueeze(-1)
        for blk in self.blocks:
            x = blk(x, self.causal[:T, :T])
        final = self.last_ln(x)[:, -1]
        return torch.einsum("bd,bcd->bc", final, self.item_emb(candidates))


def get_inputs():
    history = torch.randint(1, num_items + 1, (batch_size, max_len))
    history[:, :50] = 0
    return [history, torch.randint(1, num_items + 1, (batch_size, num_candidates))]


def get_init_inputs():
    return [num_items, max_len, hidden, num_heads]
