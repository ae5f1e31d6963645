"""Builders for small hand-made search graphs."""

from __future__ import annotations

from typing import Any

from kevolve.v1 import common_pb2
from services.controller.search.base import GraphNode, SearchState


def node(node_id: str, parent: str = "", seq: int = 0, fitness: float = 0.0,
         verdict: int = common_pb2.PASSED, done: bool = True) -> GraphNode:
    return GraphNode(node_id=node_id, parent_id=parent, generation=0, seq=seq, done=done,
                     verdict=verdict if done else 0, fitness=fitness if verdict == common_pb2.PASSED else 0.0)


def state(*nodes: GraphNode, pending: list[str] | None = None, config: dict[str, Any] | None = None,
          policy_state: dict[str, Any] | None = None) -> SearchState:
    return SearchState(job_id="j", seed=1, nodes={n.node_id: n for n in nodes}, pending_parents=pending or [],
                       decisions=0, policy_state=policy_state or {}, config=config or {})
