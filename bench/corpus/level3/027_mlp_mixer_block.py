"""MLP-Mixer block: token-mixing MLP across patches (transposed) and channel-mixing MLP, each pre-LayerNorm with residual."""

import torch
import torch.nn as nn

batch_size = 64
num_patches = 196
hidden_dim = 768
tokens_mlp_dim = 384
channels_mlp_dim = 3072


class MlpBlock(nn.Module):
    def __init__(self, dim, mlp_dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, mlp_dim)
        self.fc2 = nn.Linear(mlp_dim, dim)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.fc1(x)))


class Model(nn.Module):
    def __init__(self, num_patches, hidden_dim, tokens_mlp_dim, channels_mlp_dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden_dim)
        self.token_mixing = MlpBlock(num_patches, tokens_mlp_dim)
        self.norm2 = nn.LayerNorm(hidden_dim)
        self.channel_mixing = MlpBlock(hidden_dim, channels_mlp_dim)

    def forward(self, x):
        y = self.norm1(x).transpose(1, 2)
        x = x + self.token_mixing(y).transpose(1, 2)
        return x + self.channel_mixing(self.norm2(x))


def get_inputs():
    return [torch.randn(batch_size, num_patches, hidden_dim)]


def get_init_inputs():
    return [num_patches, hidden_dim, tokens_mlp_dim, channels_mlp_dim]
