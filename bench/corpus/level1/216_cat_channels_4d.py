"""Concatenates two NCHW feature maps along the channel dimension (skip connection merge)."""

import torch
import torch.nn as nn

batch_size = 16
c1 = 128
c2 = 64
height = width = 128


class Model(nn.Module):
    def forward(self, decoder_feat, skip_feat):
        return torch.cat((decoder_feat, skip_feat), 1)


def get_inputs():
    return [torch.randn(batch_size, c1, height, width), torch.randn(batch_size, c2, height, width)]


def get_init_inputs():
    return []
