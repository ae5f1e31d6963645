"""The ports the launcher picks for one NATS server: client and monitor never the same."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from kevolve.client import natsd


class _Socket:
    """A socket whose binds get the ports of a script, in order (as the kernel may give the
    same ephemeral port to two binds in a row)."""

    script: list[int] = []

    def __enter__(self) -> _Socket:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def bind(self, address: tuple[str, int]) -> None:
        self.port = _Socket.script.pop(0)

    def getsockname(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)


def test_a_port_handed_out_twice_is_not_taken_for_the_monitor(monkeypatch: pytest.MonkeyPatch) -> None:
    _Socket.script = [41000, 41000, 41000, 41001]
    monkeypatch.setattr(natsd.socket, "socket", _Socket)
    client = natsd.free_port()
    assert natsd.free_port(client) == 41001
    assert _Socket.script == []


def test_free_ports_are_bindable() -> None:
    port = natsd.free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
