"""Random baseline: uniform over passing kernels; before any pass, over failures and the spec."""

from __future__ import annotations

import random
from collections import Counter

from helpers_search import node, state

from kevolve.v1 import common_pb2, job_pb2
from services.controller.search import make_policy


def test_uniform_over_correct_nodes_only() -> None:
    st = state(node("a", seq=0, fitness=1.0), node("b", seq=1, fitness=5.0),
               node("x", seq=2, verdict=common_pb2.INCORRECT))
    counts = Counter(make_policy(job_pb2.RANDOM).select(st, random.Random(i)).parent_id for i in range(400))
    assert set(counts) == {"a", "b"} and abs(counts["a"] - counts["b"]) < 80  # fitness does not matter


def test_before_any_pass_spec_and_failures_are_candidates() -> None:
    st = state(node("x", seq=0, verdict=common_pb2.INCORRECT), node("p", seq=1, done=False))
    picks = {make_policy(job_pb2.RANDOM).select(st, random.Random(i)).parent_id for i in range(100)}
    assert picks == {"", "x"}  # never the node still being evaluated
