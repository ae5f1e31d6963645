"""Conv1d, kernel 3, 'same' padding, with bias, fp16 at the paper's production shape.

Computes ``conv1d(x, W, b, padding=1)`` with (B, Cin, Cout, L) = (2048, 96, 96, 200) and
K = 3: the KernelEvolve paper's conv1d case study (Section 5.1), where torch's own conv1d
and conv2d paths leave 1.6-2.3x on an H100. The ``ood_wide`` case is the paper's
out-of-distribution shape on which a specialised kernel regresses.

Minimal bytes moved: ``(B*Cin*L + Cout*Cin*K + Cout + B*Cout*L) * 2``.
FLOPs: ``2 * B * Cout * L * Cin * K`` (plus ``B*Cout*L`` bias adds).
"""

import torch
import torch.nn as nn

family = "paper operator: conv1d (sec. 5.1)"
batch = 2048
c_in = 96
c_out = 96
length = 200
kernel = 3

cpu_shapes = {"batch": 2, "c_in": 8, "c_out": 12, "length": 40}
test_cases = [{"name": "ood_wide", "sizes": {"batch": 64, "c_in": 768, "c_out": 768, "length": 1024}}]


class Model(nn.Module):
    def __init__(self, c_in: int, c_out: int, kernel: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, kernel, padding=kernel // 2)
        with torch.no_grad():
            self.conv.bias.copy_(torch.randn(c_out) * 0.3)
        self.conv.half()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs() -> list[torch.Tensor]:
    return [(torch.randn(batch, c_in, length) + 0.1).to(torch.float16)]


def get_init_inputs() -> list[object]:
    return [c_in, c_out, kernel]


def bytes_moved() -> int:
    return (batch * c_in * length + c_out * c_in * kernel + c_out + batch * c_out * length) * 2


def flops() -> int:
    return 2 * batch * c_out * length * c_in * kernel + batch * c_out * length
