"""Same seed, same choices; a JSON round trip of policy_state mid-run changes nothing."""

from __future__ import annotations

import copy
import json

import pytest

from kevolve.v1 import job_pb2
from services.controller.search import make_policy
from services.controller.search.simulate import Trace, run_search

POLICIES = [job_pb2.GREEDY, job_pb2.MCTS, job_pb2.EVOLUTIONARY, job_pb2.RANDOM]


def choices(trace: Trace) -> list[tuple[str, int, float]]:
    nodes = sorted(trace.state.nodes.values(), key=lambda n: n.seq)
    return [(n.parent_id, n.context_mode, n.fitness) for n in nodes]


@pytest.mark.parametrize("policy", POLICIES)
def test_same_seed_same_selections(policy: int) -> None:
    a = run_search(make_policy(policy), seed=11, budget=30, parallelism=3)
    b = run_search(make_policy(policy), seed=11, budget=30, parallelism=3)
    c = run_search(make_policy(policy), seed=12, budget=30, parallelism=3)
    assert choices(a) == choices(b)
    assert choices(a) != choices(c)


@pytest.mark.parametrize("policy", POLICIES)
def test_policy_state_survives_json_round_trip_mid_run(policy: int) -> None:
    whole = run_search(make_policy(policy), seed=5, budget=30, parallelism=2)
    half = run_search(make_policy(policy), seed=5, budget=30, parallelism=2, stop_after=13)
    st = half.state
    # What a restarted controller has: the graph from the DB, policy_state from JSON, a new policy.
    st.policy_state = json.loads(json.dumps(st.policy_state))
    st.nodes = copy.deepcopy(st.nodes)
    resumed = run_search(make_policy(policy), seed=5, budget=30, parallelism=2, state=st)
    assert choices(resumed) == choices(whole)
