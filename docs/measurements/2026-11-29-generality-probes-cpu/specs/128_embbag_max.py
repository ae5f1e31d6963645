import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.EmbeddingBag(100, 8, mode='max')

    def forward(self, i):
        return self.m(i)


def get_inputs():
    return [torch.randint(0, 100, (16, 5))]


def get_init_inputs():
    return []
