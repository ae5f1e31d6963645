"""What KEDA's nats-jetstream scaler will see: it reads the NATS monitoring endpoint
(/jsz) for the stream and consumer each ScaledObject names. Against a real nats-server,
the consumers kevolve's bus creates must be exactly those names and report the lag."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any

from kevolve import subjects
from kevolve.bus import Bus
from kevolve.config import CommonSettings
from kevolve.client.natsd import NatsServer
from kevolve.v1 import evaluation_pb2, profile_pb2


def _jsz(server: NatsServer, account: str) -> dict[str, Any]:
    # The query KEDA's scaler makes (account, consumers, config).
    url = f"http://127.0.0.1:{server.monitor_port}/jsz?acc={account}&consumers=true&config=true"
    with urllib.request.urlopen(url, timeout=5) as response:
        return dict(json.loads(response.read()))


async def test_each_scaled_pool_consumer_exists_with_its_lag(
        rendered: dict[str, list[dict[str, Any]]], settings: CommonSettings, nats_server: NatsServer) -> None:
    triggers = [(o["spec"]["scaleTargetRef"]["name"], o["spec"]["triggers"][0]["metadata"])
                for o in rendered["prod"] if o["kind"] == "ScaledObject"]
    deployments = {o["metadata"]["name"]: o for o in rendered["prod"] if o["kind"] == "Deployment"}
    bus = await Bus.connect(settings, "test")
    expected: dict[str, int] = {}
    for i, (target, meta) in enumerate(triggers):
        pod = deployments[target]["spec"]["template"]
        service = pod["metadata"]["labels"]["app.kubernetes.io/component"]
        env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
        platform = env[f"KEVOLVE_{service.upper()}_PLATFORM"]
        if service == "evaluator":
            subject, message = subjects.eval_subject(platform), evaluation_pb2.EvaluationRequest
        else:
            subject, message = subjects.profile_subject(platform), profile_pb2.ProfileRequest
        # The pool's first pod creates the durable consumer (as the service does on start).
        await bus.consumer(subject, message, lambda m, d: asyncio.sleep(0)).subscribe()
        for n in range(i + 2):  # a different backlog per pool, so a mix-up shows
            await bus.publish(subject, message(job_id=f"j{n}"), msg_id=f"{subject}:{n}")
        expected[meta["consumer"]] = i + 2
    await bus.close()

    account = triggers[0][1]["account"]
    details = _jsz(nats_server, account)["account_details"]
    (acc,) = [a for a in details if a["name"] == account]
    streams = {s["name"]: s for s in acc["stream_detail"]}
    stream = streams[triggers[0][1]["stream"]]
    pending = {c["name"]: c["num_pending"] for c in stream["consumer_detail"]}
    assert {name: pending.get(name) for name in expected} == expected
