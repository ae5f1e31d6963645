"""Greedy: refine the best, fix the latest failure, escape plateaus with a fresh start."""

from __future__ import annotations

import random

from helpers_search import node, state

from kevolve.v1 import common_pb2, job_pb2
from services.controller.search import SearchState, Selection, make_policy

FAIL = common_pb2.COMPILE_ERROR


def pick(st: SearchState) -> Selection:
    return make_policy(job_pb2.GREEDY).select(st, random.Random(0))


def test_unspecified_policy_is_greedy() -> None:
    assert make_policy(job_pb2.SELECTION_POLICY_UNSPECIFIED).name == "greedy"
    assert make_policy("GREEDY").name == "greedy"


def test_empty_graph_expands_the_spec() -> None:
    sel = pick(state())
    assert sel.parent_id == "" and sel.context_mode == common_pb2.PARENT_TRAJECTORY


def test_picks_best_correct_node_ties_by_seq() -> None:
    st = state(node("a", seq=0, fitness=1.2), node("b", seq=1, fitness=2.0), node("c", seq=2, fitness=2.0),
               node("d", seq=3, verdict=FAIL))
    sel = pick(st)
    assert sel.parent_id == "b" and sel.context_mode == common_pb2.PARENT_TRAJECTORY


def test_sibling_compare_once_parent_has_children() -> None:
    st = state(node("a", seq=0, fitness=2.0), pending=["a"])
    assert pick(st).context_mode == common_pb2.SIBLING_COMPARE


def test_without_correct_node_fixes_most_recent_failure() -> None:
    st = state(node("a", seq=0, verdict=FAIL), node("b", seq=1, verdict=common_pb2.INCORRECT),
               node("c", seq=2, done=False))
    sel = pick(st)
    assert sel.parent_id == "b" and sel.context_mode == common_pb2.PARENT_TRAJECTORY


def test_fresh_start_after_k_non_improving_children_then_resumes() -> None:
    kids = [node(f"k{i}", parent="best", seq=i + 1, fitness=1.0) for i in range(3)]
    st = state(node("best", seq=0, fitness=2.0), *kids, config={"fresh_after": 3})
    first = pick(st)
    assert (first.parent_id, first.context_mode) == ("", common_pb2.FRESH_START)
    # The run of failures is spent: the next pick refines the best again.
    assert pick(st).parent_id == "best"


def test_next_fresh_start_needs_k_new_non_improving_children() -> None:
    kids = [node(f"k{i}", parent="best", seq=i + 1, fitness=1.0) for i in range(3)]
    st = state(node("best", seq=0, fitness=2.0), *kids)
    assert pick(st).context_mode == common_pb2.FRESH_START
    for i in range(3, 5):  # two more failures to improve: keep refining
        st.nodes[f"k{i}"] = node(f"k{i}", parent="best", seq=i + 1, fitness=2.0)  # a tie is no improvement
        assert pick(st).parent_id == "best"
    st.nodes["k5"] = node("k5", parent="best", seq=6, verdict=FAIL)
    assert pick(st).context_mode == common_pb2.FRESH_START


def test_improving_child_becomes_the_parent() -> None:
    kids = [node("k0", "best", 1, 1.0), node("k1", "best", 2, 1.0), node("k2", "best", 3, 2.5)]
    st = state(node("best", seq=0, fitness=2.0), *kids)
    sel = pick(st)
    assert sel.parent_id == "k2" and sel.context_mode == common_pb2.PARENT_TRAJECTORY


def test_repeated_failing_fixes_restart_from_spec() -> None:
    st = state(node("a", seq=0, verdict=FAIL), node("b", "a", 1, verdict=FAIL),
               node("c", "b", 2, verdict=FAIL))
    sel = pick(st)
    assert (sel.parent_id, sel.context_mode) == ("", common_pb2.FRESH_START)
