import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, classes=5, dim=32, heads=4, patch=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        self.flatten = nn.Flatten()
        self.linear_proj = nn.Linear(dim * (16 // patch) ** 2, dim)
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(d_model=dim, nhead=heads, dim_feedforward=64, dropout=0.0) for _ in range(2)])
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.fc_out = nn.Linear(dim, classes)

    def forward(self, x):
        B = x.size(0)
        x = self.linear_proj(self.flatten(self.conv1(x)))
        x = torch.cat((self.cls_token.expand(B, -1, -1), x.unsqueeze(1)), dim=1)
        for layer in self.layers:
            x = layer(x)
        return self.fc_out(x[:, 0])


def get_inputs():
    return [torch.randn(3, 3, 16, 16)]


def get_init_inputs():
    return []
