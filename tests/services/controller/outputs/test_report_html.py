"""The HTML report: its content, and that a real browser renders it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kevolve.v1 import common_pb2, job_pb2
from kevolve.nodeids import node_name
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
    assert page.count("<svg") == 2  # tree and plot, both drawn without Graphviz
    best = data.best_path[-1]
    # Every node is drawn under its own name, and the best path is highlighted (blue, thick).
    assert all(f">{node_name(n.node_id, data.job_id)}</text>" in page for n in data.nodes)
    assert page.count('stroke="#1565c0" stroke-width="3"') >= 2 * len(data.best_path)
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


def test_nodes_read_by_their_own_names_with_models_tokens_cost_and_failure_reasons() -> None:
    """Node ids start with the job id (every node's first 8 characters alike): the tree and the
    header name them by their suffix. The page says which model wrote how many candidates with
    how many tokens, what the job cost, and why candidates failed; a short job's time axis
    reads in fractions of a second."""
    job = "3f9c2a7d41b0e5aa"
    nodes = [ReportNode(f"{job}-n0", "", common_pb2.PASSED, 1.4, 100.0, model="model-a", tokens=900),
             ReportNode(f"{job}-n1", f"{job}-n0", common_pb2.COMPILE_ERROR, 0.0, 100.4,
                        summary="NameError: name 'BLOCK' is not defined", model="model-a", tokens=1100),
             ReportNode(f"{job}-n2", f"{job}-n0", common_pb2.COMPILE_ERROR, 0.0, 100.9,
                        summary="NameError: name 'BLOCK' is not defined", model="model-b", tokens=700),
             ReportNode(f"{job}-n3", f"{job}-n1", common_pb2.INCORRECT, 0.0, 101.2, summary="trial 0: 3 of 64 off")]
    data = ReportData(job, "spec", "cuda", "GREEDY", "budget", 100.0, nodes, path_to(nodes, f"{job}-n0"),
                      [], "", prompt_tokens=2000, completion_tokens=700, cost_usd=0.0123)
    page = render_report(data)
    assert all(f">n{i}</text>" in page for i in range(4)) and "best</b> n0 at 1.40x" in page
    assert "2700 tokens (2000 in, 700 out), $0.0123" in page
    assert "model-a: 2 candidates, 2000 tokens" in page and "offline: 1 candidate, 0 tokens" in page
    assert "<td>COMPILE_ERROR</td><td>NameError: name &#39;BLOCK&#39; is not defined</td><td>2</td>" in page
    assert "trial 0: 3 of 64 off" in page
    assert ">0.3s</text>" in page and ">0.9s</text>" in page  # ticks of a 1.2 s job
