"""The NATS subjects of every hop, in one place.

All work hops live in one JetStream stream with work-queue retention: a message stays
until a consumer acks it, so a crashed consumer loses nothing (JetStream redelivers after
AckWait). Each subject has exactly one durable consumer, shared by the replicas of the
service that consumes it (a work queue allows no overlapping consumers).

| subject                      | message            | publisher  | consumer (durable)          |
|------------------------------|--------------------|------------|-----------------------------|
| kv.work.expand               | ExpandRequest      | controller | retriever (retriever)       |
| kv.work.generate             | GenerateRequest    | retriever  | generator (generator)       |
| kv.work.candidate            | CandidateGenerated | generator  | controller (ctl-candidate)  |
| kv.work.eval.<platform>      | EvaluationRequest  | controller | evaluator pool (eval-<p>)   |
| kv.work.evaluated            | EvaluationResult   | evaluator  | controller (ctl-evaluated)  |
| kv.work.profile.<platform>   | ProfileRequest     | controller | profiler pool (prof-<p>)    |
| kv.work.profiled             | ProfileResult      | profiler   | controller (ctl-profiled)   |
| kv.events.<job_id>           | JobEvent           | controller | any observer (core NATS)    |

Platforms are plain names ("cpu", "cuda", "mtia-sim", ...) so a new accelerator needs no
change here: its evaluator pool consumes kv.work.eval.<name>.
"""

from __future__ import annotations

import re

STREAM = "KEVOLVE_WORK"
STREAM_SUBJECTS = ["kv.work.>"]

EXPAND = "kv.work.expand"
GENERATE = "kv.work.generate"
CANDIDATE = "kv.work.candidate"
EVALUATED = "kv.work.evaluated"
PROFILED = "kv.work.profiled"

_PLATFORM = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


def check_platform(platform: str) -> str:
    """A platform name must be a single subject token (no dots or wildcards)."""
    if not _PLATFORM.match(platform):
        raise ValueError(f"invalid platform name {platform!r}: use lowercase letters, digits, '-' or '_'")
    return platform


def eval_subject(platform: str) -> str:
    return f"kv.work.eval.{check_platform(platform)}"


def profile_subject(platform: str) -> str:
    return f"kv.work.profile.{check_platform(platform)}"


def events_subject(job_id: str) -> str:
    return f"kv.events.{job_id}"


def durable_name(subject: str) -> str:
    """Durable consumer name for a work subject (one per subject)."""
    tail = subject.removeprefix("kv.work.")
    return {
        "expand": "retriever",
        "generate": "generator",
        "candidate": "ctl-candidate",
        "evaluated": "ctl-evaluated",
        "profiled": "ctl-profiled",
    }.get(tail, tail.replace(".", "-").replace("eval-", "eval-").replace("profile-", "prof-"))
