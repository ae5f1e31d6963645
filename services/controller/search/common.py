"""Helpers shared by the policies: config look-up, context-mode names, ancestry walks."""

from __future__ import annotations

from typing import Any

from kevolve.v1 import common_pb2

from .base import GraphNode, SearchState

PARENT_TRAJECTORY = common_pb2.PARENT_TRAJECTORY
SIBLING_COMPARE = common_pb2.SIBLING_COMPARE
TRAJECTORY_AND_SIBLINGS = common_pb2.TRAJECTORY_AND_SIBLINGS
FRESH_START = common_pb2.FRESH_START

ROOT = ""  # parent id meaning "generate from the spec alone"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def cfg(config: dict[str, Any], key: str, default: float) -> float:
    """A numeric JobConfig value, where 0/absent means "use the default".

    The engine may build the dict with ``MessageToDict`` (camelCase keys, int64 as strings,
    zero values omitted) or with proto field names; both spellings are accepted so a
    mismatch cannot silently disable a rule.
    """
    raw = config.get(key, config.get(_camel(key)))
    if raw is None or raw == "":
        return default
    value = float(raw)
    return value if value else default


def flag(config: dict[str, Any], key: str, default: bool) -> bool:
    raw = config.get(key, config.get(_camel(key)))
    return default if raw is None else bool(raw)


def ancestors(state: SearchState, node_id: str) -> list[GraphNode]:
    """The node's ancestors, nearest first (stops at a parent missing from the graph)."""
    out: list[GraphNode] = []
    seen: set[str] = set()
    parent = state.nodes[node_id].parent_id if node_id in state.nodes else ROOT
    while parent and parent in state.nodes and parent not in seen:
        seen.add(parent)
        node = state.nodes[parent]
        out.append(node)
        parent = node.parent_id
    return out


def has_children(state: SearchState, node_id: str) -> bool:
    """True when the node has a child in the graph or an expansion of it is in flight."""
    return node_id in state.pending_parents or any(n.parent_id == node_id for n in state.nodes.values())


def failing_chain(state: SearchState, node_id: str) -> int:
    """How many failed nodes in a row end at ``node_id`` (itself included) along its ancestry."""
    node = state.nodes[node_id]
    if node.correct:
        return 0
    count = 1
    for anc in ancestors(state, node_id):
        if anc.correct:
            break
        count += 1
    return count


def done_nodes(state: SearchState) -> list[GraphNode]:
    return sorted((n for n in state.nodes.values() if n.done), key=lambda n: n.seq)
