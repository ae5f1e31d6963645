"""Two stacked nn.TransformerEncoderLayer (post-norm, ReLU, batch_first) with a key padding mask."""

import torch
import torch.nn as nn

batch_size = 32
seq_len = 256
d_model = 512
nhead = 8
dim_feedforward = 2048


class Model(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward, num_layers=2):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=num_layers, enable_nested_tensor=False)

    def forward(self, src, src_key_padding_mask):
        return self.encoder(src, src_key_padding_mask=src_key_padding_mask)


def get_inputs():
    lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size, 1))
    pad_mask = torch.arange(seq_len)[None, :] >= lengths
    return [torch.randn(batch_size, seq_len, d_model), pad_mask]


def get_init_inputs():
    return [d_model, nhead, dim_feedforward]
