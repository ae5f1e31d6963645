"""The KB as retrievable units: markdown split into ``##`` sections, code samples whole.

Documents are found through kb/index.md (deep search navigates the index, as the paper's
agent does); only when the index is missing does the loader walk the tree. Section ids
(``guidance/reductions.md#online-softmax-one-read-for-max-and-sum``) are what prompts and
messages cite, so they are stable as long as headings are.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from services.retriever import kbindex

Kind = Literal["constraints", "guidance", "hardware", "sample"]
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Section:
    id: str
    path: str              # relative to kb/
    title: str             # document title
    heading: str           # section heading ("" for a whole document)
    text: str              # the section body as it goes into a prompt (heading included)
    kind: Kind
    hardware: str = ""     # kb/hardware/<hw> folder name, for hardware docs and samples there

    @property
    def tokens(self) -> int:
        return approx_tokens(self.text)


def approx_tokens(text: str) -> int:
    """Roughly 4 characters per token for English and code (no tokenizer works offline here)."""
    return max(1, (len(text) + 3) // 4)


def slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") or "section"


def _kind(path: str) -> tuple[Kind, str] | None:
    parts = path.split("/")
    if parts[0] == "constraints" and path.endswith(".md"):
        return "constraints", ""
    if parts[0] == "guidance" and path.endswith(".md"):
        return "guidance", ""
    if parts[0] == "hardware" and len(parts) >= 3:
        if path.endswith(".md"):
            return "hardware", parts[1]
        if path.endswith(".py"):
            return "sample", parts[1]
        return None
    if parts[0] == "samples" and path.endswith(".py"):
        return "sample", ""
    return None


def split_markdown(path: str, text: str, kind: Kind, hardware: str) -> list[Section]:
    """One section per ``## heading``; text before the first one is kept only if it says something."""
    title = ""
    chunks: list[tuple[str, list[str]]] = [("", [])]
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and line.startswith("# ") and not title:
            title = line[2:].strip()
            continue
        if not in_fence and line.startswith("## "):
            chunks.append((line[3:].strip(), []))
            continue
        chunks[-1][1].append(line)
    title = title or path
    sections: list[Section] = []
    seen: set[str] = set()
    for heading, lines in chunks:
        body = "\n".join(lines).strip()
        if not body:
            continue
        anchor = slug(heading) if heading else "intro"
        while anchor in seen:  # duplicate headings get -2, -3 ... like most renderers
            anchor = f"{anchor}-{len(seen)}"
        seen.add(anchor)
        shown = f"### {title} — {heading}\n\n{body}" if heading else f"### {title}\n\n{body}"
        sections.append(Section(f"{path}#{anchor}", path, title, heading, shown, kind, hardware))
    return sections


def sample_section(path: str, text: str, hardware: str) -> Section:
    try:
        doc = ast.get_docstring(ast.parse(text)) or ""
    except SyntaxError:
        doc = ""
    title = doc.strip().splitlines()[0] if doc.strip() else path
    shown = f"### Example kernel `{path}` — {title}\n\n```python\n{text.strip()}\n```"
    return Section(path, path, title, "", shown, "sample", hardware)


def load_sections(kb_dir: Path) -> list[Section]:
    """Every retrievable unit listed in kb/index.md (or the tree, without an index)."""
    entries = kbindex.read_index(kb_dir)
    paths = [e.path for e in entries] if entries is not None else kbindex.kb_files(kb_dir)
    sections: list[Section] = []
    for rel in paths:
        kind = _kind(rel)
        file = kb_dir / rel
        if kind is None or not file.is_file():  # an index entry for a deleted file is skipped, not fatal
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        if kind[0] == "sample":
            sections.append(sample_section(rel, text, kind[1]))
        else:
            sections.extend(split_markdown(rel, text, kind[0], kind[1]))
    return sections
