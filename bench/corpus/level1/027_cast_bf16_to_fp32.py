"""Upcasts a bfloat16 activation tensor to float32."""

import torch
import torch.nn as nn

batch = 32
seq = 2048
hidden = 4096


class Model(nn.Module):
    def forward(self, hidden_states):
        return hidden_states.float()


def get_inputs():
    return [torch.randn(batch, seq, hidden, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
