import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, a,b,y):
        return F.cosine_embedding_loss(a, b, y)


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 16), torch.randn(8, 16), torch.randint(0, 2, (8,)).float() * 2 - 1]


def get_init_inputs():
    return []
