"""Islands: round-robin roots, children join the asking island, ring migration."""

from __future__ import annotations

import random

from helpers_search import node, state

from kevolve.v1 import common_pb2, job_pb2
from services.controller.search import make_policy
from services.controller.search.simulate import run_search


def test_roots_seed_islands_round_robin_and_children_follow_parent() -> None:
    policy = make_policy(job_pb2.EVOLUTIONARY)
    st = state(config={"islands": 3})
    sels = []
    for _ in range(3):
        sels.append(policy.select(st, random.Random(st.decisions)))
        st.decisions += 1
    assert all(s.parent_id == "" for s in sels)
    for i in range(3):
        n = node(f"r{i}", seq=i, fitness=1.0 + i)
        st.nodes[n.node_id] = n
        policy.observe(st, n)
    assert st.policy_state["members"] == [["r0"], ["r1"], ["r2"]]
    assert st.nodes["r2"].island == 2
    st.config["fresh_prob"] = 0.0
    st.decisions = 4  # 4 % 3 islands -> island 1, whose only member is r1
    sel = policy.select(st, random.Random(5))
    assert sel.parent_id == "r1" and sel.context_mode == common_pb2.TRAJECTORY_AND_SIBLINGS
    child = node("c", "r1", 3, 2.5)
    st.nodes["c"] = child
    policy.observe(st, child)
    assert st.policy_state["island_of"]["c"] == 1


def test_migration_copies_each_islands_best_to_the_next() -> None:
    policy = make_policy(job_pb2.EVOLUTIONARY)
    st = state(config={"islands": 2, "migration_interval": 4})
    for i, fit in enumerate([1.0, 2.0, 1.5, 0.5]):  # roots: islands 0,1,0,1
        n = node(f"r{i}", seq=i, fitness=fit)
        st.nodes[n.node_id] = n
        policy.observe(st, n)
    members = st.policy_state["members"]
    assert "r1" in members[0] and "r2" in members[1]  # best of 1 -> 0, best of 0 -> 1
    assert [m[1:] for m in st.policy_state["migrations"]] == [[0, 1, "r2"], [1, 0, "r1"]]


def test_tournament_prefers_fitter_parents() -> None:
    policy = make_policy(job_pb2.EVOLUTIONARY)
    nodes = [node(f"n{i}", seq=i, fitness=float(i + 1)) for i in range(6)]
    st = state(*nodes, config={"islands": 1, "fresh_prob": 0.0})
    for n in nodes:
        policy.observe(st, n)
    picks = [policy.select(st, random.Random(i)).parent_id for i in range(200)]
    # A 3-way tournament among distinct entrants never crowns the worst; the best wins most.
    assert "n0" not in picks and picks.count("n5") > picks.count("n2")
    st.config["parent_selection"] = "proportional"
    prop = [policy.select(st, random.Random(i)).parent_id for i in range(300)]
    assert prop.count("n5") > prop.count("n0") * 2 and prop.count("n0") > 0


def test_simulated_run_populates_every_island_and_migrates() -> None:
    trace = run_search(make_policy(job_pb2.EVOLUTIONARY), seed=3, budget=40, parallelism=2,
                       config={"islands": 4, "migration_interval": 10})
    ps = trace.state.policy_state
    assert len(ps["migrations"]) >= 1
    assert all(ps["members"][i] for i in range(4))


def test_fresh_start_child_joins_the_island_that_asked() -> None:
    policy = make_policy(job_pb2.EVOLUTIONARY)
    nodes = [node(f"r{i}", seq=i, fitness=1.0) for i in range(2)]
    st = state(*nodes, config={"islands": 2, "fresh_prob": 1.0})
    for n in nodes:
        policy.observe(st, n)  # r0 -> island 0, r1 -> island 1
    st.decisions = 1
    sel = policy.select(st, random.Random(0))
    assert (sel.parent_id, sel.context_mode) == ("", common_pb2.FRESH_START)
    fresh = node("f", seq=2, fitness=0.5)
    st.nodes["f"] = fresh
    policy.observe(st, fresh)
    assert st.policy_state["island_of"]["f"] == 1  # not round-robin's next (island 0)


def test_island_without_a_passing_kernel_fixes_its_latest_failure() -> None:
    policy = make_policy(job_pb2.EVOLUTIONARY)
    bad = node("x", seq=0, verdict=common_pb2.RUNTIME_ERROR)
    st = state(bad, config={"islands": 1})
    policy.observe(st, bad)
    sel = policy.select(st, random.Random(0))
    assert (sel.parent_id, sel.context_mode) == ("x", common_pb2.PARENT_TRAJECTORY)
