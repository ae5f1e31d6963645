import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.ConvTranspose2d(3, 8, 4, stride=2, padding=1)

    def forward(self, x, y=None):
        x = self.c(x) + 0.5
        x = torch.min(x, torch.tensor(0.0))
        return F.gelu(x) * 2.0


def get_inputs():
    return [torch.randn(2, 3, 6, 6)]


def get_init_inputs():
    return []
