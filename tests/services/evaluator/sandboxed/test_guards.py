"""Which programs a library may start on a candidate's behalf (the audit hook itself is
exercised through the adversarial corpus; installing it here would outlive the test)."""

from __future__ import annotations

import pytest

from services.evaluator.sandboxed.guards import _gpu_query


@pytest.mark.parametrize(("executable", "argv", "allowed"), [
    # What triton.testing.nvsmi runs when Inductor asks for clocks while compiling a GEMM baseline.
    (None, ["nvidia-smi", "-i", "0", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits"], True),
    ("/usr/bin/nvidia-smi", [b"nvidia-smi", b"--query-gpu=name"], True),
    (None, ["nvidia-smi", "-lgc", "300"], False),                           # locking clocks is no query
    (None, ["nvidia-smi", "--query-gpu=name", "-r"], False),                # a reset smuggled in
    (None, ["nvidia-smi"], False),
    ("/bin/sh", ["nvidia-smi", "--query-gpu=name"], False),                 # another program by that name
    (None, ["/bin/sh", "-c", "nvidia-smi --query-gpu=name; id"], False),    # shell=True
    (None, "nvidia-smi --query-gpu=name", False),
])
def test_only_read_only_gpu_queries_pass(executable: str | None, argv: object, allowed: bool) -> None:
    assert _gpu_query("subprocess.Popen", (executable, argv, None, None)) is allowed


def test_only_popen_is_considered() -> None:
    assert not _gpu_query("os.system", ("nvidia-smi --query-gpu=name",))
