"""What a candidate that gets past the static checks can reach: nothing outside its sandbox.

The static checks are the second line. Each test here switches them off (as if a candidate
found a route they miss, like ``typing.sys.modules["os"]``) and shows the sandbox and the
runtime guards hold on their own: host files, credentials, the reference's expected outputs,
the network and other tenants' files are out of reach, and starting a process or calling
native code is refused.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from evaluator_helpers import FIXTURES, cpu_job

from kevolve.exec import sandbox
from kevolve.config import REPO_ROOT
from kevolve.v1 import common_pb2
from services.evaluator import harness as harness_module
from services.evaluator.config import EvaluatorSettings
from services.evaluator.harness import Harness

needs_bwrap = pytest.mark.skipif(sandbox.bwrap_status()[0] is None, reason="bubblewrap cannot run here")

SPEC = FIXTURES / "specs" / "softmax_small.py"
KERNEL = '''
import typing
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + offs, e / tl.sum(e, axis=0), mask=mask)

os = typing.sys.modules["os"]

def attack():
{attack}

class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        if attack():
            # Whatever the attack reached turns the answer wrong: PASSED means it reached nothing.
            y.fill_(0.0)
        return y
'''


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    scratch = tmp_path_factory.mktemp("evaluator")
    h = Harness(EvaluatorSettings(platform="cpu", scratch_dir=scratch, timeout_s=90, memory_mb=4096),
                REPO_ROOT / "kb")
    yield h
    h.close()


@pytest.fixture(autouse=True)
def no_static_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness_module.static_check, "check_source", lambda source: [])


def _evaluate(harness: Harness, tmp_path: Path, attack: str, tenant: str = "default") -> tuple[str, str, str]:
    body = "\n".join("    " + line for line in attack.strip().splitlines())
    path = tmp_path / f"candidate_{tenant}.py"
    path.write_text(KERNEL.replace("{attack}", body))
    outcome = harness.evaluate(cpu_job(SPEC, path, tenant=tenant))
    result = outcome.result
    return common_pb2.Verdict.Name(result.verdict), result.decided_by, str(outcome.report)


@needs_bwrap
def test_host_files_credentials_and_expected_outputs_are_out_of_reach(
        harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = tmp_path / "home" / ".ssh" / "id_rsa"
    planted.parent.mkdir(parents=True)
    planted.write_text("PRIVATE-KEY-MATERIAL")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
    monkeypatch.setenv("KEVOLVE_CONTROLLER_TOKENS", "tok=tenant")
    targets = [str(planted), "/etc/shadow", str(REPO_ROOT / "README.md"), str(harness.root / "refcache")]
    attack = f'''
found = []
for path in {targets!r}:
    if os.path.exists(path):
        found.append(path)
for key, value in os.environ.items():
    if "SECRET" in key or "TOKEN" in key or value in ("aws-secret-value",):
        found.append(key)
return found
'''
    verdict, decided_by, report = _evaluate(harness, tmp_path, attack)
    assert verdict == "PASSED", (decided_by, report[-3000:])
    assert "PRIVATE-KEY-MATERIAL" not in report and "aws-secret-value" not in report


@needs_bwrap
def test_the_network_is_unreachable(harness: Harness, tmp_path: Path) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    received: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            received.append(conn.recv(1024))
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    attack = f'''
s = typing.sys.modules["socket"]
try:
    c = s.create_connection(("127.0.0.1", {port}), timeout=2)
    c.sendall(b"stolen")
    return True
except OSError:
    return False
'''
    try:
        verdict, decided_by, report = _evaluate(harness, tmp_path, attack)
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
    assert received == []
    assert verdict == "PASSED", (decided_by, report[-3000:])


def test_starting_a_process_is_refused(harness: Harness, tmp_path: Path) -> None:
    attack = '''
typing.sys.modules["subprocess"].run(["true"])
return False
'''
    verdict, decided_by, _ = _evaluate(harness, tmp_path, attack)
    assert (verdict, decided_by) == ("REJECTED_RUNTIME", "runtime:process")


def test_a_process_started_and_the_error_swallowed_is_still_refused(harness: Harness, tmp_path: Path) -> None:
    attack = '''
try:
    os.system("true")
except BaseException:
    pass
return False
'''
    verdict, decided_by, _ = _evaluate(harness, tmp_path, attack)
    assert (verdict, decided_by) == ("REJECTED_RUNTIME", "runtime:process")


def test_native_calls_by_hand_are_refused(harness: Harness, tmp_path: Path) -> None:
    attack = '''
typing.sys.modules["ctypes"].CDLL(None).getpid()
return False
'''
    verdict, decided_by, _ = _evaluate(harness, tmp_path, attack)
    assert (verdict, decided_by) == ("REJECTED_RUNTIME", "runtime:process")


@needs_bwrap
def test_one_tenant_never_sees_what_another_left(harness: Harness, tmp_path: Path) -> None:
    # Tenant a's candidate leaves a marker in every writable place it has; tenant b's looks there.
    places = '''
places = [os.getcwd(), os.path.dirname(os.getcwd()), os.environ.get("TRITON_CACHE_DIR", ""),
          os.environ.get("TORCHINDUCTOR_CACHE_DIR", ""), os.path.dirname(os.environ.get("TRITON_CACHE_DIR", "/")),
          "/tmp"]
'''
    leave = places + '''
for place in places:
    try:
        os.makedirs(place, exist_ok=True)
        open(os.path.join(place, "marker-from-a"), "w").write("a")
    except OSError:
        pass
return False
'''
    look = places + '''
for place in places:
    if place and os.path.exists(os.path.join(place, "marker-from-a")):
        return True
return False
'''
    assert _evaluate(harness, tmp_path, leave, tenant="a")[0] == "PASSED"
    verdict, decided_by, report = _evaluate(harness, tmp_path, look, tenant="b")
    assert verdict == "PASSED", (decided_by, report[-3000:])
