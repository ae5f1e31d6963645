"""A job's HTML report: search tree, fitness over time, per-shape speedups, the best code.

Built from plain data (the engine/CLI reads it from the DB), rendered with jinja2 into one
file with everything inline (SVG, CSS), so it can be mailed or attached to a ticket.
"""

from __future__ import annotations

import html
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import graphviz
import jinja2
from markupsafe import Markup

from kevolve.v1 import common_pb2

from .export import TEMPLATES

VERDICT_COLOURS = {
    "PASSED": "#4caf50", "SUSPICIOUS": "#ffd54f", "INCORRECT": "#ff9800", "COMPILE_ERROR": "#e53935",
    "RUNTIME_ERROR": "#c62828", "TIMEOUT": "#8e24aa", "CRASHED": "#6d4c41", "OUT_OF_MEMORY": "#5e35b1",
    "REJECTED_STATIC": "#455a64", "REJECTED_RUNTIME": "#455a64", "NO_CODE": "#9e9e9e",
    "INFRA_ERROR": "#bdbdbd", "VERDICT_UNSPECIFIED": "#e0e0e0",
}


@dataclass
class ReportNode:
    node_id: str
    parent_id: str
    verdict: int | str          # common_pb2.Verdict value or name
    fitness: float
    created_at: float           # unix seconds
    summary: str = ""           # one line shown as the node's tooltip

    @property
    def verdict_name(self) -> str:
        if isinstance(self.verdict, str):
            return self.verdict
        return common_pb2.Verdict.Name(self.verdict) if self.verdict else "VERDICT_UNSPECIFIED"


@dataclass
class CaseSpeedup:
    case: str
    speedup: float               # best kernel's fitness on this case (<= 1: the reference is kept)
    node_id: str = ""
    kernel_ms: float | None = None
    baseline_ms: float | None = None


@dataclass
class ReportData:
    job_id: str
    spec_name: str
    platform: str
    policy: str
    end_reason: str
    created_at: float
    nodes: list[ReportNode]
    best_path: list[str]         # node ids from a root to the best node
    cases: list[CaseSpeedup] = field(default_factory=list)
    best_code: str = ""


def _short(node_id: str) -> str:
    return node_id[:8]


def tree_svg(data: ReportData) -> str:
    """The search graph drawn by graphviz's dot: colour = verdict, size = fitness."""
    if shutil.which("dot") is None:
        return ('<p class="warn">The search tree needs Graphviz\'s <code>dot</code> program '
                '(Debian: <code>apt-get install graphviz</code>).</p>')
    on_path = set(data.best_path)
    best = max((n.fitness for n in data.nodes), default=0.0) or 1.0
    dot = graphviz.Digraph(graph_attr={"rankdir": "TB", "bgcolor": "transparent"},
                           node_attr={"style": "filled", "fontname": "Helvetica", "fontsize": "10"})
    dot.node("spec", "spec", shape="box", fillcolor="#e3f2fd")
    for n in data.nodes:
        scale = 0.55 + 0.9 * max(n.fitness, 0.0) / best
        label = f"{_short(n.node_id)}\n{n.fitness:.2f}x" if n.fitness else _short(n.node_id)
        dot.node(n.node_id, label, shape="ellipse", fillcolor=VERDICT_COLOURS.get(n.verdict_name, "#e0e0e0"),
                 width=f"{scale:.2f}", height=f"{scale * 0.6:.2f}", fixedsize="true",
                 tooltip=f"{n.node_id} {n.verdict_name} {n.summary}".strip(),
                 penwidth="3" if n.node_id in on_path else "1",
                 color="#1565c0" if n.node_id in on_path else "#333333")
        parent = n.parent_id if n.parent_id and any(m.node_id == n.parent_id for m in data.nodes) else "spec"
        on = n.node_id in on_path and (parent == "spec" or parent in on_path)
        dot.edge(parent, n.node_id, color="#1565c0" if on else "#888888", penwidth="3" if on else "1")
    svg = dot.pipe(format="svg").decode()
    return svg[svg.index("<svg"):]  # drop the XML prolog and doctype: the SVG is inlined in HTML


def fitness_svg(data: ReportData, width: int = 720, height: int = 260) -> str:
    """Each evaluated node as a dot at its creation time, and the best-so-far as a step line."""
    pts = sorted((n.created_at - data.created_at, n.fitness, n.verdict_name) for n in data.nodes)
    if not pts:
        return "<p>No candidates.</p>"
    left, right, top, bottom = 56, 15, 15, 35
    t_max = max(p[0] for p in pts) or 1.0
    f_max = max(max(p[1] for p in pts), 1.0) * 1.1

    def x(t: float) -> float:
        return left + (width - left - right) * t / t_max

    def y(f: float) -> float:
        return height - bottom - (height - top - bottom) * f / f_max

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" class="plot">',
             f'<line x1="{left}" y1="{y(0)}" x2="{width - right}" y2="{y(0)}" stroke="#333"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{y(0)}" stroke="#333"/>']
    for i in range(5):  # y ticks, plus the 1.0x line that separates wins from losses
        f = f_max * i / 4
        parts.append(f'<text x="{left - 6}" y="{y(f) + 4:.1f}" text-anchor="end" font-size="11">'
                     f'{f:.1f}</text>')
    parts.append(f'<line x1="{left}" y1="{y(1.0):.1f}" x2="{width - right}" y2="{y(1.0):.1f}" '
                 'stroke="#999" stroke-dasharray="4 3"/>')
    for i in range(5):
        t = t_max * i / 4
        parts.append(f'<text x="{x(t):.1f}" y="{height - bottom + 16}" text-anchor="middle" '
                     f'font-size="11">{t:.0f}s</text>')
    best, steps = 0.0, []
    for t, f, _ in pts:
        if f > best:
            steps.append(f"{x(t):.1f},{y(best):.1f} {x(t):.1f},{y(f):.1f}")
            best = f
    steps.append(f"{x(t_max):.1f},{y(best):.1f}")
    parts.append(f'<polyline points="{x(0):.1f},{y(0):.1f} {" ".join(steps)}" fill="none" '
                 'stroke="#1565c0" stroke-width="2" class="best-line"/>')
    for t, f, verdict in pts:
        colour = VERDICT_COLOURS.get(verdict, "#999")
        parts.append(f'<circle cx="{x(t):.1f}" cy="{y(f):.1f}" r="4" fill="{colour}">'
                     f'<title>{html.escape(verdict)} {f:.2f}x at {t:.0f}s</title></circle>')
    parts.append(f'<text x="{width / 2}" y="{height - 4}" text-anchor="middle" font-size="12">'
                 'time since submission</text>')
    mid = top + (height - top - bottom) / 2
    parts.append(f'<text x="12" y="{mid}" font-size="12" text-anchor="middle" '
                 f'transform="rotate(-90 12 {mid})">fitness (speedup)</text></svg>')
    return "".join(parts)


def code_html(code: str) -> tuple[str, str]:
    """(highlighted code, its CSS). Pygments ships with rich, a dependency; plain escaping otherwise."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return f"<pre>{html.escape(code)}</pre>", ""
    fmt = HtmlFormatter(cssclass="code")
    return highlight(code, PythonLexer(), fmt), fmt.get_style_defs(".code")


def render_report(data: ReportData) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    code, code_css = code_html(data.best_code)
    by_verdict: dict[str, int] = {}
    for n in data.nodes:
        by_verdict[n.verdict_name] = by_verdict.get(n.verdict_name, 0) + 1
    best = max(data.nodes, key=lambda n: n.fitness, default=None)
    return env.get_template("report.html.j2").render(
        d=data, tree=_markup(tree_svg(data)),
        plot=_markup(fitness_svg(data)), code=_markup(code), code_css=_markup(code_css),
        by_verdict=sorted(by_verdict.items()), colours=VERDICT_COLOURS, best=best)


def _markup(text: str) -> Markup:
    # Marks our own generated SVG/HTML as safe; user text inside it was escaped already.
    return Markup(text)


def write_report(path: Path, data: ReportData) -> None:
    path.write_text(render_report(data))


def path_to(nodes: list[ReportNode], node_id: str) -> list[str]:
    """Node ids from the root down to ``node_id`` (for ``ReportData.best_path``)."""
    parents = {n.node_id: n.parent_id for n in nodes}
    path: list[str] = []
    while node_id and node_id in parents and node_id not in path:
        path.append(node_id)
        node_id = parents[node_id]
    return path[::-1]
