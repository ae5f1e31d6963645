"""InterFormer PFFN block: matmul + bias + GELU + RMSNorm, fp16 (batch=512, seq=64, 256->256).

Computes, per token of x [batch, seq, d_in]:

    h = gelu(x @ W + b);   out = h * rsqrt(mean(h^2) + eps) * g

the personalised FFN chain of InterFormer that the KernelEvolve paper fuses into one
kernel (the RMSNorm needs the whole d_out row, so a fused kernel keeps a full row tile of
the matmul output in registers).

Minimal bytes moved: ``(batch*seq*(d_in + d_out) + d_in*d_out + 2*d_out) * 2``.
FLOPs: ``2*batch*seq*d_in*d_out`` plus ``13*batch*seq*d_out`` for bias, GELU and RMSNorm.
"""

import torch
import torch.nn as nn

family = "fusion: InterFormer PFFN"
batch = 512
seq = 64
d_in = 256
d_out = 256
eps = 1e-6

cpu_shapes = {"batch": 2, "seq": 8, "d_in": 32, "d_out": 64}
test_cases = [{"name": "small_batch", "sizes": {"batch": 64, "seq": 64, "d_in": 256, "d_out": 256}}]


class Model(nn.Module):
    def __init__(self, d_in: int, d_out: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((torch.randn(d_in, d_out) / d_in ** 0.5).to(torch.float16))
        self.bias = nn.Parameter((torch.randn(d_out) * 0.2).to(torch.float16))
        self.gamma = nn.Parameter((torch.randn(d_out) * 0.1 + 1.0).to(torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(torch.matmul(x, self.weight) + self.bias).float()
        rms = torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (h * rms * self.gamma.float()).to(x.dtype)


def get_inputs() -> list[torch.Tensor]:
    return [(torch.randn(batch, seq, d_in) + 0.2).to(torch.float16)]


def get_init_inputs() -> list[object]:
    return [d_in, d_out, eps]


def bytes_moved() -> int:
    return (batch * seq * (d_in + d_out) + d_in * d_out + 2 * d_out) * 2


def flops() -> int:
    return 2 * batch * seq * d_in * d_out + 13 * batch * seq * d_out
