import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(16, 24)
        self.d = nn.Dropout(0.2)

    def forward(self, x, y=None):
        x = self.d(self.l(x))
        x = torch.mean(x, dim=1, keepdim=True)
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
