"""Mamba-2 structured state space duality over chunks: segment sums of the decay, intra-chunk outputs, per-chunk states and their passing between chunks (einsums, cumsum, exp, triangular masks)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_length = 512
n_heads = 8
d_head = 64
d_state = 16
block_len = 64


def segsum(x):
    T = x.size(-1)
    x_cumsum = torch.cumsum(x, dim=-1)
    x_segsum = x_cumsum[..., :, None] - x_cumsum[..., None, :]
    mask = torch.tril(torch.ones(T, T, device=x.device, dtype=bool), diagonal=0)
    return x_segsum.masked_fill(~mask, -torch.inf)


class Model(nn.Module):
    def __init__(self, batch_size, seq_length, n_heads, d_head, d_state, block_len):
        super().__init__()
        self.block_len = block_len
        # A decay (A < 0, as Mamba's -exp(A_log)), and B, C scaled to unit-size products.
        self.A = nn.Parameter(-0.1 * torch.rand(batch_size, seq_length, n_heads))
        self.B = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state) / d_state ** 0.5)
        self.C = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state) / d_state ** 0.5)

    def forward(self, X):
        b, L, h, p = X.shape
        c, l = L // self.block_len, self.block_len
        X = X.reshape(b, c, l, h, p)
        A = self.A.reshape(b, c, l, h).permute(0, 3, 1, 2)
        B = self.B.reshape(b, c, l, h, -1)
        C = self.C.reshape(b, c, l, h, -1)
        A_cumsum = torch.cumsum(A, dim=-1)
        L_mask = torch.exp(segsum(A))
        Y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", C, B, L_mask, X)
        decay_states = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)
        states = torch.einsum("bclhn,bhcl,bclhp->bchpn", B, decay_states, X)
        states = torch.cat([torch.zeros_like(states[:, :1]), states], dim=1)
        decay_chunk = torch.exp(segsum(F.pad(A_cumsum[:, :, :, -1], (1, 0))))
        states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)[:, :-1]
        Y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", C, states, torch.exp(A_cumsum))
        return (Y_diag + Y_off).reshape(b, L, h, p)


def get_inputs():
    return [torch.randn(batch_size, seq_length, n_heads, d_head)]


def get_init_inputs():
    return [batch_size, seq_length, n_heads, d_head, d_state, block_len]
