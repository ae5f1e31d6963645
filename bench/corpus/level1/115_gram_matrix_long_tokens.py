"""Feature covariance over a long token axis: features^T @ features for (262144 x 512) features."""

import torch
import torch.nn as nn

num_tokens = 262144
feat_dim = 512


class Model(nn.Module):
    def forward(self, features):
        return features.T @ features / features.shape[0]


def get_inputs():
    return [torch.randn(num_tokens, feat_dim)]


def get_init_inputs():
    return []
