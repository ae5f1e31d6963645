"""Scaled, masked softmax: softmax(x * scale + mask), fp16 (512 heads x 256 x 256).

Computes the attention-probability step ``softmax(scores * scale + mask, dim=-1)`` with a
causal additive mask (0 on and below the diagonal, -inf above) shared by every
batch-head. Each row keeps at least its diagonal, so no row is all -inf.

Minimal bytes moved: ``2 * heads * seq * seq * 2 + seq * seq * 2`` (scores, out, mask).
FLOPs: ``7 * heads * seq * seq`` (scale, mask add, then softmax's 5 per element).
"""

import torch
import torch.nn as nn

family = "fusion: softmax(x*scale + mask)"
heads = 512
seq = 256

cpu_shapes = {"heads": 4, "seq": 48}


class Model(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.softmax(scores * self.scale + mask, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    scores = (torch.randn(heads, seq, seq) * 6.0 + 1.0).to(torch.float16)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    mask = torch.zeros(seq, seq).masked_fill(~causal, float("-inf")).to(torch.float16)
    return [scores, mask]


def get_init_inputs() -> list[object]:
    return [0.125]


def bytes_moved() -> int:
    return 2 * heads * seq * seq * 2 + seq * seq * 2


def flops() -> int:
    return 7 * heads * seq * seq
