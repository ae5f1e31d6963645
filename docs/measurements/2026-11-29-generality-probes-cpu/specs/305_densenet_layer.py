import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, layers=3, cin=16, growth=8):
        super().__init__()
        self.layers = nn.ModuleList([nn.Sequential(nn.BatchNorm2d(cin + i * growth), nn.ReLU(inplace=True),
                                                   nn.Conv2d(cin + i * growth, growth, 3, padding=1, bias=False),
                                                   nn.Dropout(0.0)) for i in range(layers)])

    def forward(self, x):
        feats = [x]
        for layer in self.layers:
            feats.append(layer(torch.cat(feats, 1)))
        return torch.cat(feats, 1)


def get_inputs():
    return [torch.randn(2, 16, 12, 12)]


def get_init_inputs():
    return []
