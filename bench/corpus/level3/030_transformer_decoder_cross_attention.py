"""nn.TransformerDecoderLayer (pre-norm, GELU) with a causal target mask and encoder memory, followed by a vocabulary projection."""

import torch
import torch.nn as nn

batch_size = 16
tgt_len = 256
src_len = 512
d_model = 512
nhead = 8
vocab = 16000


class Model(nn.Module):
    def __init__(self, d_model, nhead, vocab, tgt_len):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(d_model, nhead, 4 * d_model, dropout=0.1, activation="gelu",
                                                batch_first=True, norm_first=True)
        self.out = nn.Linear(d_model, vocab)
        self.register_buffer("tgt_mask", torch.triu(torch.full((tgt_len, tgt_len), float("-inf")), diagonal=1))

    def forward(self, tgt, memory):
        T = tgt.size(1)
        return self.out(self.layer(tgt, memory, tgt_mask=self.tgt_mask[:T, :T]))


def get_inputs():
    return [torch.randn(batch_size, tgt_len, d_model), torch.randn(batch_size, src_len, d_model)]


def get_init_inputs():
    return [d_model, nhead, vocab, tgt_len]
