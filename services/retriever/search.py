"""Deep search: rank KB sections for a diagnosis with BM25 and pack the best into a token budget.

Eligible units are the guidance sections (every platform), the sections of the target
platform's own hardware folder (``platforms.toml`` ``kb_hardware``), and code samples (the
shared ones plus those in that hardware folder). Other platforms' hardware docs are never
eligible: Hopper tuning advice would mislead an MTIA-sim prompt. Constraints are not
ranked; the prompt always carries all of them.

A query is a list of weighted terms: the diagnosis keywords count double, the spec's
operator terms once, so "why is it slow" outranks "what is it" but both matter.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# bm25s imports JAX when it is installed and runs a top-k with it at import, which starts
# JAX's GPU backend: that takes 75% of a GPU's memory for this process (a retriever was seen
# holding 108 GB of an H200 that the evaluators were timing candidates on). The retriever
# scores a few hundred sections with NumPy and needs no device: JAX, if imported, stays on
# the host.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import bm25s  # noqa: E402 - after the JAX setting above
import numpy as np  # noqa: E402

from services.retriever.corpus import Section, load_sections

_STOP = frozenset(
    "a an and are as at be but by can do does for from has have if in into is it its no not of on or so such "
    "than that the their then there these this to too use used uses using was were when where which while "
    "will with you your one two all any each more most less only also very".split()
)
_RAW = re.compile(r"[a-z0-9_.]+")

# (query text, candidate texts) -> similarity per candidate; used only when re-ranking is on.
Reranker = Callable[[str, Sequence[str]], Sequence[float]]


def _stem(word: str) -> str:
    # A light plural/-ing/-ed folding, applied to documents and queries alike, so "spills"
    # finds "spill" and "tiles" finds "tile" without a stemming dependency.
    for suffix, keep in (("ing", 5), ("ies", 4), ("es", 5), ("ed", 5), ("s", 4)):
        if word.endswith(suffix) and len(word) >= keep + len(suffix) - 1:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            if suffix == "es" and not word.endswith(("shes", "ches", "xes", "sses")):
                return word[:-1]
            if suffix == "ies":
                return word[:-3] + "y"
            return word[: -len(suffix)]
    return word


def tokenize(text: str) -> list[str]:
    """Words, plus the parts of dotted/underscored names (``tl.dot`` -> tl.dot, tl, dot)."""
    out: list[str] = []
    for raw in _RAW.findall(text.lower()):
        raw = raw.strip("._")
        if not raw:
            continue
        parts = [raw] + ([p for p in re.split(r"[._]", raw) if p] if ("." in raw or "_" in raw) else [])
        for part in parts:
            if len(part) >= 2 and part not in _STOP and not part.isdigit():
                out.append(_stem(part))
    return out


@dataclass
class Retrieval:
    sections: list[Section] = field(default_factory=list)   # guidance + hardware, best first
    samples: list[Section] = field(default_factory=list)
    constraints: list[Section] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    query: list[str] = field(default_factory=list)

    @property
    def doc_ids(self) -> list[str]:
        return [s.id for s in self.constraints + self.sections + self.samples]

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.sections + self.samples)


@dataclass(frozen=True)
class _Index:
    stamp: float
    sections: list[Section]
    ranked: list[Section]      # everything but constraints, aligned with the BM25 rows
    bm25: bm25s.BM25


class KnowledgeBase:
    """The indexed KB; reloads itself when kb/index.md changes (another file added and indexed).

    Searches run in worker threads: the index is one immutable object swapped in whole, so a
    search never sees new sections with an old BM25 matrix.
    """

    def __init__(self, kb_dir: Path) -> None:
        self.kb_dir = kb_dir
        self._lock = threading.Lock()
        self._index = self._build(self._index_stamp())

    def _index_stamp(self) -> float:
        index = self.kb_dir / "index.md"
        return index.stat().st_mtime if index.exists() else 0.0

    def _build(self, stamp: float) -> _Index:
        sections = load_sections(self.kb_dir)
        ranked = [s for s in sections if s.kind != "constraints"]
        if not ranked:
            raise ValueError(f"knowledge base {self.kb_dir} has no guidance, hardware or sample documents")
        bm25 = bm25s.BM25()
        # Headings and titles are repeated: a section titled "Register pressure and spills" is
        # about spills even if the word occurs once in its body.
        corpus = [tokenize(f"{s.heading} {s.heading} {s.title} {s.text}") for s in ranked]
        bm25.index(corpus, show_progress=False)
        return _Index(stamp, sections, ranked, bm25)

    def maybe_reload(self) -> _Index:
        stamp = self._index_stamp()
        with self._lock:
            if stamp != self._index.stamp:
                self._index = self._build(stamp)
            return self._index

    @property
    def sections(self) -> list[Section]:
        return self._index.sections

    @property
    def constraints(self) -> list[Section]:
        return [s for s in self.sections if s.kind == "constraints"]

    def key_figures(self, hardware: str) -> Section | None:
        """The target's "Key numbers" section (SM count, memory, bandwidth, peak throughput):
        every prompt for it carries the figures, whatever the search ranked first."""
        return next((s for s in self.sections if s.hardware == hardware and s.kind == "hardware"
                     and s.heading.lower().startswith("key numbers")), None)

    def hardware_folders(self) -> set[str]:
        return {s.hardware for s in self.sections if s.hardware}

    def search(self, primary: Sequence[str], secondary: Sequence[str], hardware: str, *, budget_tokens: int,
               top_k: int, samples_k: int = 1, min_hardware: int = 2,
               reranker: Reranker | None = None) -> Retrieval:
        index = self.maybe_reload()
        why = [t for term in primary for t in tokenize(term)]
        what = [t for term in secondary for t in tokenize(term)]
        query = why * 2 + what
        scores = index.bm25.get_scores(query) if query else np.zeros(len(index.ranked))
        # A code sample is useful when it implements the same kind of operator, so for samples
        # the operator terms weigh double instead.
        sample_query = what * 2 + why
        sample_scores = index.bm25.get_scores(sample_query) if sample_query else scores
        eligible = [
            (float(sample_scores[i] if s.kind == "sample" else scores[i]), i, s) for i, s in enumerate(index.ranked)
            if (s.kind == "guidance") or (s.kind == "hardware" and s.hardware == hardware)
            or (s.kind == "sample" and s.hardware in ("", hardware))
        ]
        if reranker is not None and query:
            eligible = _rerank(eligible, " ".join(list(primary) + list(secondary)), reranker, top_k)
        # Best score first; ties (e.g. all zero) keep KB order, so a document's opening section wins.
        eligible.sort(key=lambda item: (-item[0], item[1]))
        result = Retrieval(constraints=[s for s in index.sections if s.kind == "constraints"], query=query)
        left = budget_tokens

        def take(section: Section, score: float, into: list[Section]) -> bool:
            nonlocal left
            if section.tokens > left or section.id in result.scores:
                return False
            into.append(section)
            result.scores[section.id] = round(score, 4)
            left -= section.tokens
            return True

        # Samples first, but never more than half the budget: a whole worked kernel of the same
        # operator is worth several paragraphs, yet must not crowd the diagnosis-driven guidance out.
        sample_cap = left - budget_tokens // 2
        for score, _, section in eligible:
            if len(result.samples) >= samples_k:
                break
            if section.kind == "sample" and score > 0 and section.tokens <= left - sample_cap:
                take(section, score, result.samples)
        hw = [item for item in eligible if item[2].kind == "hardware"]
        for score, _, section in hw:
            if len(result.sections) >= min_hardware:
                break
            take(section, score, result.sections)
        for score, _, section in eligible:
            if len(result.sections) >= top_k:
                break
            if section.kind != "sample" and score > 0:
                take(section, score, result.sections)
        result.sections.sort(key=lambda s: -result.scores[s.id])
        return result


def _rerank(eligible: list[tuple[float, int, Section]], query: str, reranker: Reranker,
            top_k: int) -> list[tuple[float, int, Section]]:
    """Blend BM25 with embedding similarity for the head of the list; the tail keeps BM25 order."""
    eligible = sorted(eligible, key=lambda item: (-item[0], item[1]))
    head, tail = eligible[: 3 * top_k], eligible[3 * top_k:]
    if not head:
        return eligible
    sims = list(reranker(query, [item[2].text for item in head]))
    best = max(item[0] for item in head) or 1.0
    blended = [(0.5 * score / best + 0.5 * float(sim), i, s) for (score, i, s), sim in zip(head, sims, strict=True)]
    floor = min((b[0] for b in blended), default=0.0)
    # Scale the tail below the head so re-ranking never promotes a section it did not score.
    return blended + [(min(floor, 0.0) - 1.0 + score / (best * 10), i, s) for score, i, s in tail]
