import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin=24, squeeze=6, e1=16, e3=16):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.act = nn.ReLU(inplace=True)
        self.e1 = nn.Conv2d(squeeze, e1, 1)
        self.e3 = nn.Conv2d(squeeze, e3, 3, padding=1)

    def forward(self, x):
        x = self.act(self.squeeze(x))
        return torch.cat([self.act(self.e1(x)), self.act(self.e3(x))], 1)


def get_inputs():
    return [torch.randn(2, 24, 15, 15)]


def get_init_inputs():
    return []
