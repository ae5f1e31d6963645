"""Token activations (12288 x 768) times an up-projection matrix (768 x 3072) with torch.mm."""

import torch
import torch.nn as nn

num_tokens = 12288
d_model = 768
d_ff = d_model * 4


class Model(nn.Module):
    def forward(self, tokens, w_up):
        return torch.mm(tokens, w_up)


def get_inputs():
    return [torch.randn(num_tokens, d_model), torch.randn(d_model, d_ff) * 0.02]


def get_init_inputs():
    return []
