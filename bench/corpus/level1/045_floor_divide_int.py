"""Integer floor division of int64 values by positive per-column divisors."""

import torch
import torch.nn as nn

batch_size = 16384
num_fields = 1024


class Model(nn.Module):
    def forward(self, values, divisors):
        return torch.div(values, divisors, rounding_mode="floor")


def get_inputs():
    values = torch.randint(-10**6, 10**6, (batch_size, num_fields))
    divisors = torch.randint(1, 1000, (num_fields,))
    return [values, divisors]


def get_init_inputs():
    return []
