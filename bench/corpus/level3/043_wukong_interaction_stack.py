"""WuKong-style interaction stack: each layer concatenates a factorization-machine block (X X^T via a compressed copy, MLP) and a linear compression block, with LayerNorm and residual."""

import torch
import torch.nn as nn

batch_size = 1024
num_embs = 32
emb_dim = 128
num_layers = 3
fmb_out = 16
lcb_out = 16
rank = 24


class InteractionLayer(nn.Module):
    def __init__(self, n_in, d, n_fmb, n_lcb, rank):
        super().__init__()
        self.n_fmb, self.d = n_fmb, d
        self.compress = nn.Parameter(torch.randn(n_in, rank) / n_in ** 0.5)
        self.fmb_mlp = nn.Sequential(nn.LayerNorm(n_in * rank), nn.Linear(n_in * rank, 1024), nn.ReLU(),
                                     nn.Linear(1024, n_fmb * d))
        self.lcb = nn.Linear(n_in, n_lcb, bias=False)
        self.norm = nn.LayerNorm(d)
        self.residual = nn.Linear(n_in, n_fmb + n_lcb, bias=False) if n_in != n_fmb + n_lcb else None

    def forward(self, X):
        B = X.shape[0]
        inter = torch.bmm(X, torch.matmul(X.transpose(1, 2), self.compress))
        fmb = self.fmb_mlp(inter.reshape(B, -1)).view(B, self.n_fmb, self.d)
        lcb = self.lcb(X.transpose(1, 2)).transpose(1, 2)
        out = torch.cat([fmb, lcb], dim=1)
        res = X if self.residual is None else self.residual(X.transpose(1, 2)).transpose(1, 2)
        return self.norm(out + res)


class Model(nn.Module):
    def __init__(self, num_embs, emb_dim, num_layers, fmb_out, lcb_out, rank):
        super().__init__()
        layers, n = [], num_embs
        for _ in range(num_layers):
            layers.append(InteractionLayer(n, emb_dim, fmb_out, lcb_out, rank))
            n = fmb_out + lcb_out
        self.layers = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Linear(n * emb_dim, 512), nn.ReLU(), nn.Linear(512, 1))

    def forward(self, embeddings):
        return self.head(self.layers(embeddings).flatten(1))


def get_inputs():
    return [torch.randn(batch_size, num_embs, emb_dim) / emb_dim ** 0.5]


def get_init_inputs():
    return [num_embs, emb_dim, num_layers, fmb_out, lcb_out, rank]
