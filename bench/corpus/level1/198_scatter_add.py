"""scatter_add of token features into per-segment buckets along dim 0."""

import torch
import torch.nn as nn

num_tokens = 262144
hidden = 256
num_segments = 4096


class Model(nn.Module):
    def __init__(self, num_segments):
        super().__init__()
        self.num_segments = num_segments

    def forward(self, src, segment_ids):
        index = segment_ids.unsqueeze(1).expand(-1, src.size(1))
        out = torch.zeros(self.num_segments, src.size(1), dtype=src.dtype, device=src.device)
        return out.scatter_add(0, index, src)


def get_inputs():
    return [torch.randn(num_tokens, hidden), torch.randint(0, num_segments, (num_tokens,))]


def get_init_inputs():
    return [num_segments]
