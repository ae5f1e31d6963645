"""Running sum of per-step values that ignores padded steps beyond each row's length."""

import torch
import torch.nn as nn

batch = 4096
max_steps = 2048


class Model(nn.Module):
    def forward(self, values, lengths):
        steps = torch.arange(values.size(1), device=values.device)
        valid = steps.unsqueeze(0) < lengths.unsqueeze(1)
        return torch.where(valid, values, torch.zeros_like(values)).cumsum(dim=1)


def get_inputs():
    return [torch.randn(batch, max_steps), torch.randint(1, max_steps + 1, (batch,))]


def get_init_inputs():
    return []
