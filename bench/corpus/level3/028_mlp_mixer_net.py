"""MLP-Mixer classifier: 16x16 patch projection, 4 mixer blocks, LayerNorm, mean over patches, linear head."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
image_size = 224
patch = 16
hidden = 512
depth = 4
num_classes = 1000


class MixerBlock(nn.Module):
    def __init__(self, n_tokens, hidden):
        super().__init__()
        self.ln_tok = nn.LayerNorm(hidden)
        self.tok_fc1 = nn.Linear(n_tokens, 256)
        self.tok_fc2 = nn.Linear(256, n_tokens)
        self.ln_ch = nn.LayerNorm(hidden)
        self.ch_fc1 = nn.Linear(hidden, 2048)
        self.ch_fc2 = nn.Linear(2048, hidden)

    def forward(self, x):
        y = self.ln_tok(x).transpose(1, 2)
        x = x + self.tok_fc2(F.gelu(self.tok_fc1(y))).transpose(1, 2)
        return x + self.ch_fc2(F.gelu(self.ch_fc1(self.ln_ch(x))))


class Model(nn.Module):
    def __init__(self, image_size, patch, hidden, depth, num_classes):
        super().__init__()
        n_tokens = (image_size // patch) ** 2
        self.stem = nn.Conv2d(3, hidden, patch, patch)
        self.blocks = nn.Sequential(*[MixerBlock(n_tokens, hidden) for _ in range(depth)])
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, images):
        x = self.stem(images).flatten(2).transpose(1, 2)
        x = self.norm(self.blocks(x))
        return self.head(x.mean(dim=1))


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [image_size, patch, hidden, depth, num_classes]
