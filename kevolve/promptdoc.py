"""The stored prompt format (``prompts/<sha>.md``), written by the retriever, read by LLM backends.

One markdown document holds a JSON header (retrieved doc ids, the requested answer format,
the diagnosis category) and the system and user parts, separated by marker comments so a
human can read the file as-is and a backend can split it into chat messages:

    <!-- kevolve-prompt {"retrieved_docs": [...], "response_format": "full", ...} -->
    <!-- system -->
    ...system prompt...
    <!-- user -->
    ...user prompt...

Text without the header is treated as a bare user prompt, so hand-written prompts work too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_HEADER = re.compile(r"\A<!-- kevolve-prompt (?P<meta>\{.*?\}) -->\n", re.DOTALL)
SYSTEM_MARK = "<!-- system -->\n"
USER_MARK = "\n<!-- user -->\n"


class PromptFormatError(ValueError):
    """A stored prompt has the header but not the system/user markers after it."""


@dataclass
class PromptDoc:
    system: str
    user: str
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def response_format(self) -> str:
        """"full" (a complete file) or "edit" (SEARCH/REPLACE blocks against the parent)."""
        value = self.meta.get("response_format", "full")
        return value if value in ("full", "edit") else "full"


def render(doc: PromptDoc) -> str:
    # "-->" inside the JSON would end the comment early; JSON allows escaping ">" as \u003e.
    meta = json.dumps(doc.meta, sort_keys=True).replace(">", "\\u003e")
    return f"<!-- kevolve-prompt {meta} -->\n{SYSTEM_MARK}{doc.system.strip()}\n{USER_MARK}{doc.user.strip()}\n"


def parse(text: str) -> PromptDoc:
    match = _HEADER.match(text)
    if not match:
        return PromptDoc(system="", user=text.strip(), meta={})
    try:
        meta = json.loads(match.group("meta"))
    except json.JSONDecodeError as exc:
        raise PromptFormatError(f"prompt header is not valid JSON: {exc}") from exc
    body = text[match.end():]
    if not body.startswith(SYSTEM_MARK) or USER_MARK not in body:
        raise PromptFormatError("prompt has a kevolve header but lacks the '<!-- system -->'/'<!-- user -->' markers")
    system, user = body[len(SYSTEM_MARK):].split(USER_MARK, 1)
    return PromptDoc(system=system.strip(), user=user.strip(), meta=meta if isinstance(meta, dict) else {})
