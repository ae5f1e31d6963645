import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, image=16, patch=4, dim=32, heads=4, classes=10):
        super().__init__()
        self.patch = patch
        n = (image // patch) ** 2
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim))
        self.embed = nn.Linear(3 * patch * patch, dim)
        self.cls = nn.Parameter(torch.randn(1, 1, dim))
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, heads, 64, dropout=0.0, batch_first=True), 2)
        self.head = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, classes))

    def forward(self, img):
        p = self.patch
        x = img.unfold(2, p, p).unfold(3, p, p).reshape(img.shape[0], -1, p * p * 3)
        x = self.embed(x)
        x = torch.cat((self.cls.expand(img.shape[0], -1, -1), x), dim=1) + self.pos
        return self.head(self.enc(x)[:, 0])


def get_inputs():
    return [torch.randn(2, 3, 16, 16)]


def get_init_inputs():
    return []
