"""Self-supervised projector: Linear, BatchNorm1d, ReLU, Linear, BatchNorm1d without affine."""

import torch
import torch.nn as nn

batch_size = 4096
feat_dim = 2048
proj_hidden = 4096
proj_dim = 256


class Model(nn.Module):
    def __init__(self, feat_dim, proj_hidden, proj_dim):
        super().__init__()
        self.projector = nn.Sequential(
            nn.Linear(feat_dim, proj_hidden, bias=False),
            nn.BatchNorm1d(proj_hidden),
            nn.ReLU(inplace=True),
            nn.Linear(proj_hidden, proj_dim, bias=False),
            nn.BatchNorm1d(proj_dim, affine=False),
        )

    def forward(self, features):
        return self.projector(features)


def get_inputs():
    return [torch.randn(batch_size, feat_dim)]


def get_init_inputs():
    return [feat_dim, proj_hidden, proj_dim]
