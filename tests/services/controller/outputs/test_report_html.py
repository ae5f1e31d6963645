"""The HTML report: its content, and that a real browser renders it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kevolve.v1 import common_pb2, job_pb2
from services.controller.outputs.report import (CaseSpeedup, ReportData, ReportNode, path_to, render_report,
                                        write_report)
from services.controller.search import make_policy
from services.controller.search.simulate import run_search

BEST_CODE = '''import triton
# "</pre><script>alert('x')</script>" must stay text
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    pass
'''


def _data() -> ReportData:
    trace = run_search(make_policy(job_pb2.MCTS), seed=4, budget=24, parallelism=2)
    nodes = [ReportNode(n.node_id, n.parent_id, n.verdict, n.fitness, 1000.0 + 7 * n.seq,
                        summary="BLOCK_SIZE=" + n.tunables["BLOCK_SIZE"])
             for n in sorted(trace.state.nodes.values(), key=lambda n: n.seq)]
    best = max(nodes, key=lambda n: n.fitness)
    cases = [CaseSpeedup("default", best.fitness, best.node_id, 0.21, 0.48),
             CaseSpeedup("tiny", 0.7, best.node_id, 0.02, 0.014)]
    return ReportData("job-42", "softmax_rows", "cpu", "MCTS", "budget", 1000.0, nodes,
                      path_to(nodes, best.node_id), cases, BEST_CODE)


def test_report_content() -> None:
    data = _data()
    page = render_report(data)
    assert "softmax_rows" in page and "job-42" in page and "ended by</b> budget" in page
    assert page.count("<svg") == 2  # tree and plot
    best = data.best_path[-1]
    if shutil.which("dot"):
        # Every node is drawn, and the best path is highlighted (blue, thick) for its nodes.
        assert all(f">{n.node_id[:8]}" in page for n in data.nodes)
        assert page.count('stroke="#1565c0" stroke-width="3"') >= len(data.best_path)
    assert "class=\"best-line\"" in page
    # Per-shape table: the winning case names the kernel; the losing one says fallback.
    assert f"<td>{best}</td>" in page and "reference (fallback)" in page and "0.70×" in page
    # Code is shown, highlighted, and escaped.
    assert "softmax_kernel" in page and "<script>alert" not in page and "&lt;/pre&gt;" in page
    passed = sum(1 for n in data.nodes if n.verdict == common_pb2.PASSED)
    assert f"PASSED × {passed}" in page and "fitness (speedup)" in page


def test_report_without_passing_nodes_says_so() -> None:
    nodes = [ReportNode("a", "", common_pb2.COMPILE_ERROR, 0.0, 1.0)]
    page = render_report(ReportData("j", "spec", "cpu", "GREEDY", "patience", 0.0, nodes, [], [], ""))
    assert "none passed" in page and "No kernel passed." in page and "COMPILE_ERROR × 1" in page


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium not installed (Debian: apt-get install -y chromium)")
    page, png = tmp_path / "report.html", tmp_path / "report.png"
    write_report(page, _data())
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run",
                    f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}",
                    "--window-size=1200,900",
                    page.as_uri()], check=True, capture_output=True, timeout=90)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    # A blank page compresses to a few KB; the tree, plot and table make it far larger.
    assert len(data) > 30_000, len(data)
