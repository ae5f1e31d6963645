import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.ConvTranspose3d(3, 8, 3, stride=2, padding=1, output_padding=1)
        self.w = nn.Parameter(torch.tensor(1.0))
        self.n = nn.LayerNorm((8,))

    def forward(self, x, y=None):
        x = self.c(x) + self.w
        x = self.n(x.permute(0, 2, 3, 4, 1)).permute(0, 4, 1, 2, 3)
        return F.gelu(F.avg_pool3d(x, 2))


def get_inputs():
    return [torch.randn(2, 3, 3, 4, 4)]


def get_init_inputs():
    return []
