"""Dueling Q-network head: shared ReLU layer, value and advantage streams, Q = V + A - mean(A)."""

import torch
import torch.nn as nn

batch_size = 32768
state_dim = 512
hidden = 512
num_actions = 18


class Model(nn.Module):
    def __init__(self, state_dim, hidden, num_actions):
        super().__init__()
        self.shared = nn.Linear(state_dim, hidden)
        self.value = nn.Linear(hidden, 1)
        self.advantage = nn.Linear(hidden, num_actions)

    def forward(self, state):
        h = torch.relu(self.shared(state))
        a = self.advantage(h)
        return self.value(h) + a - a.mean(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, state_dim)]


def get_init_inputs():
    return [state_dim, hidden, num_actions]
