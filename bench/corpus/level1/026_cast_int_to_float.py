"""Casts int64 ids to float32 and bfloat16 and returns both."""

import torch
import torch.nn as nn

num_ids = 16 * 1024 * 1024


class Model(nn.Module):
    def forward(self, ids):
        return ids.float(), ids.to(torch.bfloat16)


def get_inputs():
    return [torch.randint(-100000, 100000, (num_ids,))]


def get_init_inputs():
    return []
