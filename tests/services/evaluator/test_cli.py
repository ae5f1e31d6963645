"""The one-shot `python -m services.evaluator eval`: verdict printed, exit status 0 only for a pass."""

from __future__ import annotations

import json
import subprocess
import sys

from evaluator_helpers import FIXTURES

from kevolve.config import REPO_ROOT


def _eval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "services.evaluator", "eval", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_pass_prints_json_and_exits_zero() -> None:
    res = _eval(
        str(FIXTURES / "specs" / "softmax_small.py"),
        str(FIXTURES / "kernels" / "correct" / "softmax_rowwise.py"),
        "--platform",
        "cpu",
        "--json",
    )
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["result"]["verdict"] == "PASSED" and report["result"]["decided_by"] == "trial:allclose"
    assert report["result"]["cases"][0]["sizes"] == {"rows": "16", "cols": "100"}


def test_rejection_names_the_check_and_exits_nonzero() -> None:
    res = _eval(
        str(FIXTURES / "specs" / "softmax_small.py"),
        str(FIXTURES / "kernels" / "adversarial" / "a08_getattr_join.py"),
        "--platform",
        "cpu",
    )
    assert res.returncode == 1
    assert "REJECTED_STATIC" in res.stdout and "static:dynamic_code" in res.stdout


def test_unknown_platform_is_a_clear_error() -> None:
    res = _eval(
        str(FIXTURES / "specs" / "softmax_small.py"),
        str(FIXTURES / "kernels" / "correct" / "softmax_rowwise.py"),
        "--platform",
        "tpu-9000",
    )
    assert res.returncode == 2 and "unknown platform 'tpu-9000'" in res.stderr
