"""MCTS: backups along ancestors, UCT descent, pending expansions spread out."""

from __future__ import annotations

import random

from helpers_search import node, state

from kevolve.v1 import common_pb2, job_pb2
from services.controller.search import GraphNode, Policy, SearchState, make_policy


def observed(*nodes: GraphNode) -> tuple[Policy, SearchState]:
    st = state(*nodes)
    policy = make_policy(job_pb2.MCTS)
    for n in sorted(nodes, key=lambda n: n.seq):
        policy.observe(st, n)
    return policy, st


def test_observe_backs_up_visits_and_values_along_ancestors() -> None:
    policy, st = observed(node("r", seq=0, fitness=1.0), node("c", "r", 1, 2.0), node("g", "c", 2, 3.0),
                          node("x", "c", 3, verdict=common_pb2.INCORRECT))
    visits, value = st.policy_state["visits"], st.policy_state["value"]
    assert visits == {"r": 4, "c": 3, "g": 1, "x": 1}
    assert value["r"] == 6.0 and value["c"] == 5.0 and value["x"] == 0.0
    assert st.policy_state["root_visits"] == 4
    assert st.policy_state["best"] == {"r": 3.0, "c": 3.0, "g": 3.0, "x": 0.0}
    policy.observe(st, st.nodes["g"])  # redelivered verdict: no double count
    assert visits["r"] == 4


def test_first_selections_expand_the_spec() -> None:
    sel = make_policy(job_pb2.MCTS).select(state(), random.Random(0))
    assert sel.parent_id == "" and sel.context_mode == common_pb2.PARENT_TRAJECTORY


def test_descends_to_the_better_subtree() -> None:
    # 3 roots and 8 finished nodes: the spec is fully widened (1 + isqrt(8) = 3), so MCTS descends.
    nodes = [node("good", seq=0, fitness=3.0), node("bad", seq=1, fitness=0.5),
             node("meh", seq=2, fitness=0.4)]
    nodes += [node(f"g{i}", "good", 3 + i, 3.0) for i in range(3)]
    nodes += [node("b0", "bad", 6, 0.5), node("m0", "meh", 7, 0.4)]
    policy, st = observed(*nodes)
    assert st.policy_state["root_visits"] == 8
    st.config["uct_c"] = 0.1  # exploitation only: the better subtree must win
    sel = policy.select(st, random.Random(0))
    assert sel.parent_id == "good" or st.nodes[sel.parent_id].parent_id == "good"


def test_pending_expansions_spread_parallel_selections() -> None:
    # Two equal roots, both saturated with children: without virtual visits every parallel
    # pick would land in the same subtree.
    nodes = [node("a", seq=0, fitness=2.0), node("b", seq=1, fitness=2.0)]
    nodes += [node(f"a{i}", "a", 2 + i, 2.0) for i in range(3)]
    nodes += [node(f"b{i}", "b", 5 + i, 2.0) for i in range(3)]
    policy, st = observed(*nodes)
    picks = []
    for i in range(6):
        sel = policy.select(st, random.Random(i))
        picks.append(sel.parent_id)
        st.pending_parents.append(sel.parent_id)
    top = [p if p in ("a", "b", "") else st.nodes[p].parent_id for p in picks]
    # Equal subtrees get equal shares (without virtual visits: a, a, a, a, b).
    assert top.count("a") == top.count("b") >= 2, picks


def test_exploration_constant_changes_choice() -> None:
    # One strong well-visited subtree and one weak barely-visited one.
    nodes = [node("s", seq=0, fitness=3.0)] + [node(f"s{i}", "s", 1 + i, 3.0) for i in range(8)]
    nodes += [node("w", seq=9, fitness=1.0)]
    greedy_pol, st = observed(*nodes)
    st.config["uct_c"] = 0.05
    exploit = greedy_pol.select(st, random.Random(0)).parent_id
    st.config["uct_c"] = 5.0
    explore = greedy_pol.select(st, random.Random(0)).parent_id
    assert exploit != "w" and (explore == "w" or explore == "")
