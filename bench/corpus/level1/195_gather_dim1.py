"""torch.gather along dim 1 with a random index tensor."""

import torch
import torch.nn as nn

batch_size = 4096
num_candidates = 4096
num_picks = 512


class Model(nn.Module):
    def forward(self, scores, index):
        return torch.gather(scores, 1, index)


def get_inputs():
    scores = torch.randn(batch_size, num_candidates)
    index = torch.randint(0, num_candidates, (batch_size, num_picks))
    return [scores, index]


def get_init_inputs():
    return []
