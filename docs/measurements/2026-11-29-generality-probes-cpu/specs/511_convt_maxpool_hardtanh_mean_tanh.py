import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.ConvTranspose2d(3, 8, 3, stride=2, padding=1)
        self.p = nn.MaxPool2d(2, 2)

    def forward(self, x, y=None):
        x = F.hardtanh(self.p(self.c(x)), -1, 1)
        return torch.tanh(x.mean(dim=(2, 3), keepdim=True))


def get_inputs():
    return [torch.randn(2, 3, 7, 7)]


def get_init_inputs():
    return []
