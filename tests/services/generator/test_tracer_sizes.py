"""The tracer at a spec's own sizes: shapes propagated on meta tensors, and with ``meta_only``
never computed for real (the generator's check of template tiles at production sizes must
not run a production-sized model on its own cores)."""
from __future__ import annotations

import pytest

from services.generator.tracer import trace

# A forward whose output shape depends on the values: meta tensors have none, so a meta trace fails.
READS_A_VALUE = '''
import torch
import torch.nn as nn

n = 512

class Model(nn.Module):
    def forward(self, x):
        return torch.nonzero(x > 0).float()

def get_inputs():
    return [torch.randn(4, n)]

def get_init_inputs():
    return []
'''


def test_own_sizes_are_traced_on_meta_tensors_and_meta_only_never_falls_back() -> None:
    wide = trace(READS_A_VALUE.replace("torch.nonzero(x > 0).float()", "torch.relu(x)"), {}, meta_only=True)
    assert wide["ok"] and wide["inputs"][0]["shape"] == [4, 512]
    # Without meta_only the tracer computes on real tensors where meta ones cannot answer.
    assert trace(READS_A_VALUE, {})["ok"]
    with pytest.raises(RuntimeError, match="ShapeProp error for: node=%nonzero"):
        trace(READS_A_VALUE, {}, meta_only=True)
