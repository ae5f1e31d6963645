"""Backstop for work that every delivery attempt failed (JetStream's MAX_DELIVERIES advisory).

Workers normally publish a failure result on their last attempt. If one could not (it
crashed each time, or the payload kills it), the server stops redelivering and emits an
advisory; without a result the job would wait forever for that expansion or verdict. The
controller turns the stuck request into the failure result its hop would have sent, through
the same idempotent handlers (so a late real result is still deduplicated or fenced), and
removes the dead message from the stream.
"""

from __future__ import annotations

import json

import structlog
from google.protobuf.message import DecodeError
from nats.aio.msg import Msg

from kevolve import subjects
from kevolve.bus import Bus, Delivery
from kevolve.v1 import common_pb2, evaluation_pb2, profile_pb2, work_pb2
from services.controller.engine.engine import Engine

log = structlog.get_logger("controller.advisory")

ADVISORY = f"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{subjects.STREAM}.*"


async def handle_advisory(bus: Bus, engine: Engine, payload: bytes) -> None:
    info = json.loads(payload)
    seq, consumer = int(info.get("stream_seq", 0)), info.get("consumer", "")
    try:
        raw = await bus.js.get_msg(subjects.STREAM, seq)
    except Exception as exc:   # already acked or deleted meanwhile: nothing is stuck
        log.info("max-deliveries advisory for a message that is gone", seq=seq, error=str(exc))
        return
    subject, data = raw.subject or "", raw.data or b""
    why = f"{consumer} gave up after {info.get('deliveries', '?')} deliveries"
    delivery = Delivery(subject=subject, num_delivered=int(info.get("deliveries", 0)), last_attempt=True)
    try:
        if subject in (subjects.EXPAND, subjects.GENERATE):
            expand = work_pb2.ExpandRequest.FromString(data) if subject == subjects.EXPAND \
                else work_pb2.GenerateRequest.FromString(data).expand
            await engine.on_candidate(work_pb2.CandidateGenerated(
                job_id=expand.job_id, expansion_id=expand.expansion_id, parent_id=expand.parent.node_id,
                generation=expand.generation, context_mode=expand.context_mode, error=why), delivery)
        elif subject.startswith("kv.work.eval."):
            req = evaluation_pb2.EvaluationRequest.FromString(data)
            await engine.on_evaluated(evaluation_pb2.EvaluationResult(
                job_id=req.job_id, node_id=req.node_id, platform=req.platform, stage=req.stage,
                verdict=common_pb2.INFRA_ERROR, decided_by="sandbox:max_deliveries", reason=why,
                attempt=req.attempt), delivery)
        elif subject.startswith("kv.work.profile."):
            req_p = profile_pb2.ProfileRequest.FromString(data)
            await engine.on_profiled(profile_pb2.ProfileResult(
                job_id=req_p.job_id, node_id=req_p.node_id, platform=req_p.platform, error=why), delivery)
        else:
            # One of the controller's own inputs: only an operator can tell why it keeps failing.
            log.error("controller could not process a result", subject=subject, seq=seq, reason=why)
            return
    except DecodeError:
        log.error("undecodable message reached max deliveries", subject=subject, seq=seq)
    log.warning("stuck work turned into a failure result", subject=subject, seq=seq, reason=why)
    try:
        await bus.js.delete_msg(subjects.STREAM, seq)
    except Exception as exc:
        log.debug("could not delete the dead message", seq=seq, error=str(exc))


async def subscribe(bus: Bus, engine: Engine) -> None:
    async def on_msg(msg: Msg) -> None:
        try:
            await handle_advisory(bus, engine, msg.data)
        except Exception as exc:   # the subscription must outlive one bad advisory
            log.error("advisory handling failed", error=repr(exc))

    await bus.nc.subscribe(ADVISORY, cb=on_msg)
