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


MOVES_ITS_STATE = '''
import torch
import torch.nn as nn

batch = 3

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.h0 = torch.randn(1, batch, 8)
        self.rnn = nn.RNN(5, 8, batch_first=True)

    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        return self.rnn(x, self.h0)[0]

def get_inputs():
    return [torch.randn(batch, 7, 5)]

def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("sizes", [{}, {"batch": 2}])
def test_a_forward_that_assigns_its_modules_attribute_is_traced(sizes: dict[str, int]) -> None:
    """``self.h0 = self.h0.to(x.device)`` in forward: the trace replaces the attribute with a
    Proxy while it runs; the tensor is put back, so shapes propagate through the graph (on
    meta tensors at the spec's sizes, for real at others)."""
    traced = trace(MOVES_ITS_STATE, sizes)
    assert traced["ok"], traced
    rnn = next(n for n in traced["nodes"] if n["target"] == "rnn")
    batch = sizes.get("batch", 3)
    assert [m["shape"] for m in rnn["multi"]] == [[batch, 7, 8], [1, batch, 8]]
