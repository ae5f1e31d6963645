"""Mixture density output: one linear yields mixture logits, means and log-scales; log_softmax and exp applied."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16384
hidden = 1024
num_mixtures = 20
out_dim = 2


class Model(nn.Module):
    def __init__(self, hidden, num_mixtures, out_dim):
        super().__init__()
        self.k = num_mixtures
        self.d = out_dim
        self.head = nn.Linear(hidden, num_mixtures * (1 + 2 * out_dim))

    def forward(self, h):
        out = self.head(h)
        logits, mu, log_sigma = out.split([self.k, self.k * self.d, self.k * self.d], dim=-1)
        log_pi = F.log_softmax(logits, dim=-1)
        sigma = torch.exp(log_sigma.clamp(-7.0, 7.0))
        return log_pi, mu.view(-1, self.k, self.d), sigma.view(-1, self.k, self.d)


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden, num_mixtures, out_dim]
