"""Multi-gate mixture of experts: expert MLPs, one softmax gate per task, gated sums of expert outputs."""

import torch
import torch.nn as nn

batch_size = 8192
input_dim = 512
num_experts = 8
expert_dim = 256
num_tasks = 2


class Model(nn.Module):
    def __init__(self, input_dim, num_experts, expert_dim, num_tasks):
        super().__init__()
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(input_dim, expert_dim), nn.ReLU()) for _ in range(num_experts)]
        )
        self.gates = nn.ModuleList([nn.Linear(input_dim, num_experts) for _ in range(num_tasks)])

    def forward(self, x):
        expert_out = torch.stack([e(x) for e in self.experts], dim=1)
        outs = []
        for gate in self.gates:
            w = torch.softmax(gate(x), dim=-1).unsqueeze(-1)
            outs.append((w * expert_out).sum(dim=1))
        return torch.stack(outs, dim=0)


def get_inputs():
    return [torch.randn(batch_size, input_dim)]


def get_init_inputs():
    return [input_dim, num_experts, expert_dim, num_tasks]
