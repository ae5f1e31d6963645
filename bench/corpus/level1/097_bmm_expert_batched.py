"""Expert-batched matmul: each of 64 experts multiplies its token slots by its own weight (torch.bmm)."""

import torch
import torch.nn as nn

num_experts = 64
capacity = 512
d_model = 1024
d_expert = 1024


class Model(nn.Module):
    def __init__(self, num_experts, d_model, d_expert):
        super().__init__()
        self.expert_weights = nn.Parameter(torch.randn(num_experts, d_model, d_expert) / d_model ** 0.5)

    def forward(self, dispatched):
        return torch.bmm(dispatched, self.expert_weights)


def get_inputs():
    return [torch.randn(num_experts, capacity, d_model)]


def get_init_inputs():
    return [num_experts, d_model, d_expert]
