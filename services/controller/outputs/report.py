"""A job's HTML report: search tree, fitness over time, per-shape speedups, the best code.

Built from plain data (the engine/CLI reads it from the DB), rendered with jinja2 into one
file with everything inline (SVG, CSS), so it can be mailed or attached to a ticket.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
from markupsafe import Markup

from kevolve.nodeids import node_name
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
    summary: str = ""           # one line shown as the node's tooltip: why it failed, its tunables
    model: str = ""             # the LLM that wrote it ("" for the offline generator)
    tokens: int = 0             # prompt + completion tokens its generation took

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
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


def failure_reasons(nodes: list[ReportNode], per_verdict: int = 3) -> list[tuple[str, int, str]]:
    """(verdict, count, reason) of the failed candidates: each verdict's most frequent reasons."""
    counts: dict[tuple[str, str], int] = {}
    for n in nodes:
        if n.verdict_name in ("PASSED", "SUSPICIOUS", "VERDICT_UNSPECIFIED"):
            continue
        key = (n.verdict_name, n.summary.strip() or "(no reason recorded)")
        counts[key] = counts.get(key, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1]))
    out: list[tuple[str, int, str]] = []
    for (verdict, reason), count in ranked:
        if sum(1 for v, _, _ in out if v == verdict) < per_verdict:
            out.append((verdict, count, reason))
    return out


def models_used(nodes: list[ReportNode]) -> list[tuple[str, int, int]]:
    """(model, candidates, tokens) per generator model, the offline generator as "offline"."""
    seen: dict[str, list[int]] = {}
    for n in nodes:
        entry = seen.setdefault(n.model or "offline", [0, 0])
        entry[0] += 1
        entry[1] += n.tokens
    return [(m, c, t) for m, (c, t) in sorted(seen.items())]


def tree_svg(data: ReportData, dx: int = 78, dy: int = 64) -> str:
    """The search graph as an inline SVG (a tidy tree: leaves side by side in search order,
    each parent over its children): colour = verdict, size = fitness, blue = the path to the
    best kernel. Drawn here, so the report needs no Graphviz."""
    if not data.nodes:
        return "<p>No candidates.</p>"
    known = {n.node_id for n in data.nodes}
    children: dict[str, list[ReportNode]] = {}
    for n in data.nodes:
        children.setdefault(n.parent_id if n.parent_id in known else "", []).append(n)
    pos: dict[str, tuple[float, int]] = {}
    next_leaf = [0.0]

    def place(node_id: str, depth: int) -> float:
        kids = children.get(node_id, [])
        if not kids:
            x = next_leaf[0]
            next_leaf[0] += 1
        else:
            xs = [place(k.node_id, depth + 1) for k in kids]
            x = (xs[0] + xs[-1]) / 2
        pos[node_id] = (x, depth)
        return x

    place("", 0)
    on_path = set(data.best_path)
    best = max((n.fitness for n in data.nodes), default=0.0) or 1.0
    depth = max(d for _, d in pos.values())
    width, height = int(max(next_leaf[0], 1) * dx), int(depth * dy + dy)

    def xy(node_id: str) -> tuple[float, float]:
        x, d = pos[node_id]
        return dx / 2 + x * dx, dy / 2 + d * dy

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" class="tree-svg">']
    for n in data.nodes:  # edges first, nodes over them
        parent = n.parent_id if n.parent_id in known else ""
        on = n.node_id in on_path and (parent == "" or parent in on_path)
        (x1, y1), (x2, y2) = xy(parent), xy(n.node_id)
        parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                     f'stroke="{"#1565c0" if on else "#888888"}" stroke-width="{3 if on else 1}"/>')
    x0, y0 = xy("")
    parts.append(f'<rect x="{x0 - 20:.1f}" y="{y0 - 11:.1f}" width="40" height="22" fill="#e3f2fd" stroke="#333"/>'
                 f'<text x="{x0:.1f}" y="{y0 + 4:.1f}" text-anchor="middle" font-size="11">spec</text>')
    for n in data.nodes:
        x, y = xy(n.node_id)
        scale = 0.55 + 0.9 * max(n.fitness, 0.0) / best
        rx, ry = 24 * scale, 14 * scale
        on = n.node_id in on_path
        label = node_name(n.node_id, data.job_id)
        tip = html.escape(f"{n.node_id} {n.verdict_name} {n.fitness:.2f}x {n.summary}".strip())
        parts.append(f'<g><title>{tip}</title>'
                     f'<ellipse cx="{x:.1f}" cy="{y:.1f}" rx="{rx:.1f}" ry="{ry:.1f}" '
                     f'fill="{VERDICT_COLOURS.get(n.verdict_name, "#e0e0e0")}" '
                     f'stroke="{"#1565c0" if on else "#333333"}" stroke-width="{3 if on else 1}"/>'
                     f'<text x="{x:.1f}" y="{y - 1:.1f}" text-anchor="middle" font-size="10">{html.escape(label)}</text>'
                     + (f'<text x="{x:.1f}" y="{y + 10:.1f}" text-anchor="middle" font-size="9">{n.fitness:.2f}x</text>'
                        if n.fitness else "") + "</g>")
    parts.append("</svg>")
    return "".join(parts)


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
                     f'font-size="11">{_seconds(t, t_max)}</text>')
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


def _seconds(t: float, span: float) -> str:
    """A time tick with as many decimals as the axis's span needs (a short job's ticks all
    read 0s otherwise)."""
    decimals = 0 if span >= 8 else 1 if span >= 0.8 else 2
    return f"{t:.{decimals}f}s"


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
        by_verdict=sorted(by_verdict.items()), colours=VERDICT_COLOURS, best=best,
        failures=failure_reasons(data.nodes), models=models_used(data.nodes),
        best_label=node_name(best.node_id, data.job_id) if best else "")


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
