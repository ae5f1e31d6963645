"""Batch event truncate: keep the most recent max_len events of each jagged sequence.

Each of ``batch`` users has a sequence of events (length in [0, 2*events], mean
``events``) and every event carries ``features`` int64 features, stored jagged:
values [features, total] with offsets [batch + 1] shared by all features. The operator
keeps the last ``min(length, max_len)`` events of every sequence, for every feature,
and returns them jagged: [features, sum(min(length, max_len))]. The paper's Batch Event
Truncate (Section 5.5, Table 8): 9 features (here) and 32 features (``many_features``),
200 events, max length 200; its PyTorch baseline loops over features, this reference
does one gather for all features.

Minimal bytes moved (expected, mean length = events, about half the rows truncated):
kept values read and written, ``2 * features * batch * kept * 8`` with
``kept = E[min(L, max_len)]``, plus offsets ``(batch + 1) * 8``.
FLOPs: 0 (pure data movement); counted as ``features * batch * kept`` index operations.
"""

import torch
import torch.nn as nn

family = "paper operator: batch event truncate (sec. 5.5)"
batch = 2048
features = 9
events = 200
max_len = 200

cpu_shapes = {"batch": 8, "features": 3, "events": 12, "max_len": 10}
test_cases = [
    {"name": "many_features", "sizes": {"batch": 2048, "features": 32, "events": 200, "max_len": 200}},
    {"name": "short_cap", "sizes": {"batch": 2048, "features": 9, "events": 200, "max_len": 100}},
]


class Model(nn.Module):
    def __init__(self, max_len: int) -> None:
        super().__init__()
        self.max_len = max_len

    def forward(self, values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        lengths = offsets[1:] - offsets[:-1]
        keep = lengths.clamp(max=self.max_len)
        out_offsets = torch.cumsum(keep, dim=0) - keep          # exclusive prefix sum
        row = torch.repeat_interleave(torch.arange(keep.numel(), device=values.device), keep)
        pos_in_row = torch.arange(row.numel(), device=values.device) - out_offsets[row]
        src = offsets[1:][row] - keep[row] + pos_in_row          # the last `keep` events
        return values[:, src]


def get_inputs() -> list[torch.Tensor]:
    lengths = torch.randint(0, 2 * events + 1, (batch,))
    offsets = torch.zeros(batch + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, dim=0)
    values = torch.randint(-(2 ** 40), 2 ** 40, (features, int(offsets[-1])))
    return [values, offsets]


def get_init_inputs() -> list[object]:
    return [max_len]


def _expected_kept() -> float:
    # E[min(L, max_len)] for L uniform on {0, ..., 2*events}.
    n = 2 * events + 1
    return sum(min(v, max_len) for v in range(n)) / n


def bytes_moved() -> int:
    return int(2 * features * batch * _expected_kept() * 8) + (batch + 1) * 8


def flops() -> int:
    return int(features * batch * _expected_kept())
