"""Mixture-of-experts router: linear gate, softmax over experts, top-2 selection, renormalized weights."""

import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 32768
hidden = 2048
num_experts = 64
top_k = 2


class Model(nn.Module):
    def __init__(self, hidden, num_experts, top_k):
        super().__init__()
        self.gate = nn.Linear(hidden, num_experts, bias=False)
        self.top_k = top_k

    def forward(self, tokens):
        probs = F.softmax(self.gate(tokens), dim=-1, dtype=torch.float32)
        weights, experts = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights, experts


def get_inputs():
    return [torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [hidden, num_experts, top_k]
