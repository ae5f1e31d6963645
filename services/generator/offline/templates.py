"""Load kb/templates/*: a `<name>.toml` header (pattern + tunables) next to `<name>.py.j2`.

Header keys: name, description, source (optional: another template's .py.j2 to render), codegen (which context builder in families.py fills the
template), priority (higher wins among matches), [match] requires/forbids (IR features,
see features()), requires_any (at least one), optional signature (regex over the decomposed op sequence) and
traced_ops (op names that must all appear in the raw fx graph, for templates that match
before lowering) or traced_any (a list of such op-name lists: any one of them suffices, for
templates with several idiomatic spellings of the same op), [tunables] NAME = [values...] (first = default).
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import jinja2

from services.generator.offline.lower import Program


class TemplateError(ValueError):
    """A template file is malformed; the message names the file and the problem."""


@dataclass
class Template:
    name: str
    description: str
    codegen: str
    priority: int
    requires: list[str]
    requires_any: list[str]
    forbids: list[str]
    signature: str
    traced_ops: list[str]
    traced_any: list[list[str]]
    tunables: dict[str, list[str]]
    source: jinja2.Template = field(repr=False)

    def defaults(self) -> dict[str, str]:
        return {k: v[0] for k, v in self.tunables.items()}

    @property
    def raw_graph(self) -> bool:
        """Matched (and rendered) from the raw fx graph rather than the lowered IR."""
        return bool(self.traced_ops or self.traced_any)

    def matches(self, program: Program | None, traced_ops: list[str]) -> bool:
        if self.raw_graph:
            alternatives = ([self.traced_ops] if self.traced_ops else []) + self.traced_any
            return any(all(op in traced_ops for op in alt) for alt in alternatives)
        if program is None:
            return False
        feats = features(program)
        if not all(r in feats for r in self.requires) or any(f in feats for f in self.forbids):
            return False
        if self.requires_any and not any(r in feats for r in self.requires_any):
            return False
        return not self.signature or re.fullmatch(self.signature, program.signature()) is not None


def features(program: Program) -> set[str]:
    feats: set[str] = set()
    for v in program.values:
        if v.op in ("unary", "binary", "where"):
            feats.add("pointwise")
        elif v.op == "reduce":
            feats.add("reduce")
        elif v.op == "acc":
            feats.update({"acc", f"acc:{v.fn}"})
    return feats


_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)


@lru_cache(maxsize=8)
def load_templates(directory: Path) -> tuple[Template, ...]:
    out: list[Template] = []
    # A loader on the folder: kernel bodies may {% include %} a part two templates share
    # (the rendered candidate must still hold all its code, since it is loaded alone).
    env = _ENV.overlay(loader=jinja2.FileSystemLoader(directory))
    for header in sorted(directory.glob("*.toml")):
        try:
            raw = tomllib.loads(header.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise TemplateError(f"{header}: {exc}") from exc
        # `source` lets two headers (patterns + tunables) share one kernel body.
        body = directory / raw["source"] if "source" in raw else header.with_suffix(".py.j2")
        if not body.exists():
            raise TemplateError(f"{header}: no {body.name} next to it")
        missing = [k for k in ("name", "codegen") if k not in raw]
        if missing:
            raise TemplateError(f"{header}: missing {', '.join(missing)}")
        tunables = {str(k): [str(x) for x in v] for k, v in raw.get("tunables", {}).items()}
        if any(not v for v in tunables.values()):
            raise TemplateError(f"{header}: every tunable needs at least one value")
        match = raw.get("match", {})
        try:
            source = env.from_string(body.read_text())
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(f"{body}:{exc.lineno}: {exc.message}") from exc
        out.append(Template(name=raw["name"], description=raw.get("description", ""), codegen=raw["codegen"],
                            priority=int(raw.get("priority", 0)), requires=list(match.get("requires", [])),
                            requires_any=list(match.get("requires_any", [])),
                            forbids=list(match.get("forbids", [])), signature=match.get("signature", ""),
                            traced_ops=list(match.get("traced_ops", [])),
                            traced_any=[list(alt) for alt in match.get("traced_any", [])], tunables=tunables, source=source))
    return tuple(sorted(out, key=lambda t: (-t.priority, t.name)))
