import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.m(x)


def get_inputs():
    return [torch.randn(4, 16, 64)]


def get_init_inputs():
    return []
