"""Recurrent layers through the general lowering: one kernel runs a layer's time steps."""

from __future__ import annotations

import pytest
from lowering_check import check


def rnn_spec(layer: str, options: str, returns: str, with_state: bool = False) -> str:
    state = ""
    if with_state:
        state = ", (h0, c0)" if layer == "LSTM" else ", h0"
    args = "x, h0, c0" if with_state and layer == "LSTM" else "x, h0" if with_state else "x"
    first = "batch_first=True" in options
    shape = "(3, 7, 5)" if first else "(7, 3, 5)"
    layers = 2 if "num_layers=2" in options else 1
    dirs = 2 if "bidirectional=True" in options else 1
    inputs = [f"torch.randn{shape}"]
    if with_state:
        inputs.append(f"torch.randn({layers * dirs}, 3, 6)")
        if layer == "LSTM":
            inputs.append(f"torch.randn({layers * dirs}, 3, 6)")
    return f"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.{layer}(5, 6, {options})

    def forward(self, {args}):
        out = self.rnn(x{state})
        return {returns}


def get_inputs():
    return [{', '.join(inputs)}]


def get_init_inputs():
    return []
"""


@pytest.mark.parametrize("options", ["num_layers=1", "num_layers=2, bidirectional=True",
                                     "batch_first=True, bias=False", "num_layers=2, batch_first=True"])
@pytest.mark.parametrize("layer", ["LSTM", "GRU", "RNN"])
def test_recurrent_outputs_and_final_states(layer: str, options: str) -> None:
    returns = "out[0], out[1][0], out[1][1]" if layer == "LSTM" else "out[0], out[1]"
    check(rnn_spec(layer, options, returns), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("layer", ["LSTM", "GRU"])
def test_given_initial_states(layer: str) -> None:
    returns = "out[0]" if layer == "GRU" else "out[0] + out[1][1].sum()"
    check(rnn_spec(layer, "num_layers=2, bidirectional=True", returns, with_state=True))


def test_relu_rnn() -> None:
    check(rnn_spec("RNN", "nonlinearity='relu', num_layers=2", "out[0]"))


def test_state_wider_than_one_tile() -> None:
    """A hidden state of 160 units is two tiles under the interpreter (128 a tile): the one
    program walks both every step, each reading the whole previous state."""
    spec = rnn_spec("LSTM", "num_layers=1", "out[0], out[1][0], out[1][1]").replace("nn.LSTM(5, 6,", "nn.LSTM(5, 160,")
    check(spec, atol=1e-4, rtol=1e-4)


def test_gpu_launch_fits_every_program_on_the_gpu_at_once() -> None:
    """The step barrier waits for every program: a large layer still launches at most
    MAX_PROGRAMS programs, each walking several tiles, never a grid that could not all be
    resident (which would hang)."""
    from services.generator.lowering.ops_rnn import MAX_PROGRAMS, gpu_launch

    for batch, hidden in [(3, 6), (64, 512), (512, 2048)]:
        launch = gpu_launch(batch, hidden)
        tiles = -(-batch // launch.meta["BM"]) * -(-hidden // launch.meta["BH"])
        assert launch.grid == (min(tiles, MAX_PROGRAMS),) == (launch.meta["NPROG"],)
    assert gpu_launch(512, 2048).grid == (MAX_PROGRAMS,)


def test_bfloat16_layers() -> None:
    """bfloat16 weights and inputs, two bidirectional layers: outputs and final states match
    PyTorch's within bfloat16's tolerance (the kernel widens the weights for the product and
    rounds what it writes out)."""
    spec = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(5, 20, num_layers=2, bidirectional=True).to(torch.bfloat16)

    def forward(self, x):
        out, h = self.rnn(x)
        return out, h


def get_inputs():
    return [torch.randn(7, 3, 5).to(torch.bfloat16)]


def get_init_inputs():
    return []
'''
    check(spec, atol=5e-2, rtol=5e-2)
