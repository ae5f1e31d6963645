"""The search engine: issues expansions for every running job and folds results back in.

One controller process owns the loop. State that matters lives in the DB and is written
in the same transaction as the decision it reflects (the expansion row together with the
job's decision counter and policy_state; a node's verdict together with the job's
counters), so a controller killed at any point restarts from the DB and the durable
JetStream messages without losing or duplicating a node:

* an expansion is recorded before it is published (``published`` flips after the PubAck);
  a restart re-publishes only unpublished ones, under the same message id;
* a result is applied only if it carries the attempt token the node waits for (fencing),
  and the follow-up request is published before the result is acked, so a crash between
  the two redelivers the result, which then only re-publishes the follow-up.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from kevolve import subjects
from kevolve.bus import Bus, Delivery
from kevolve.modelchoice import model_for
from kevolve.objstore import ObjectStore
from kevolve.platforms import get_platform, load_platforms
from kevolve.v1 import common_pb2, evaluation_pb2, job_pb2, profile_pb2, work_pb2
from services.controller import metrics
from services.controller.config import ControllerSettings
from services.controller.search import rng_for
from services.controller.store import db
from services.controller.store.convert import job_to_proto, node_to_proto
from services.controller.store.models import ExpansionRow, JobRow, NodeRow

from .dispatch import PROFILE, SCREEN, derived_seed, eval_target, expand_request, pending_stage, profile_target
from .events import EventHub
from .job_runtime import JobRuntime, build_runtime, to_graph_node
from .pools import PoolWatch, stall_reason, subjects_of
from .results import apply_result, new_node

log = structlog.get_logger("controller.engine")

FINAL_STATUSES = (job_pb2.PROFILING, job_pb2.DONE)


class Engine:
    def __init__(self, settings: ControllerSettings, factory: sessionmaker[Session], bus: Bus,
                 store: ObjectStore, hub: EventHub, kb_dir: Any) -> None:
        self.settings = settings
        self.factory = factory
        self.bus = bus
        self.store = store
        self.hub = hub
        self.kb_dir = kb_dir
        self.jobs: dict[str, JobRuntime] = {}
        self._rr = 0
        self._pump_lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._unpublished: set[str] = set()
        self.pools = PoolWatch(bus, settings.pool_wait_s)

    # ---- lifecycle -------------------------------------------------------------------

    async def resume(self) -> None:
        """Load every RUNNING job from the DB and pick up where the last process stopped."""
        # Every pool's consumer exists from now on: a pool scaled to zero is scaled up by its
        # lag, and the pool watch can tell work nobody takes from work being taken.
        await self.pools.ensure(load_platforms(self.kb_dir).values())
        with self.factory() as s:
            running = s.scalars(select(JobRow).where(JobRow.state == job_pb2.RUNNING)).all()
            for job in running:
                self._load(s, job)
            unpublished = s.scalars(select(ExpansionRow).where(
                ExpansionRow.status == "issued", ExpansionRow.published.is_(False))).all()
            self._unpublished.update(e.id for e in unpublished if e.job_id in self.jobs)
            stuck = s.scalars(select(NodeRow).where(NodeRow.attempt != NodeRow.dispatched_attempt)).all()
        log.info("resumed", jobs=len(self.jobs), unpublished=len(self._unpublished))
        for node in stuck:
            if node.job_id in self.jobs:
                await self._dispatch(node.id)
        self._refresh_job_gauge()
        self.wake()

    def _load(self, s: Session, job: JobRow) -> JobRuntime:
        nodes = s.scalars(select(NodeRow).where(NodeRow.job_id == job.id).order_by(NodeRow.seq)).all()
        issued = s.scalars(select(ExpansionRow).where(ExpansionRow.job_id == job.id,
                                                      ExpansionRow.status == "issued")).all()
        final = {n.id for n in nodes if n.status in FINAL_STATUSES}
        rt = build_runtime(job, get_platform(self.kb_dir, job.platform), list(nodes), final, list(issued))
        self.jobs[job.id] = rt
        metrics.IN_FLIGHT.labels(job.id).set(len(rt.in_flight))
        metrics.BEST_FITNESS.labels(job.id).set(job.best_fitness)
        return rt

    def wake(self) -> None:
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Issue work whenever something changed, and at least every second (wall-clock rules)."""
        while not stop.is_set():
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=1.0)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self._republish()
                for job_id in list(self.jobs):
                    await self._check_end(job_id)
                await self._check_pools()
                await self.pump()
            except Exception as exc:  # the loop must survive a DB or bus hiccup; retried next tick
                log.warning("engine tick failed", error=repr(exc))
                await asyncio.sleep(0.5)

    # ---- issuing expansions ------------------------------------------------------------

    def in_flight_total(self) -> int:
        return sum(rt.busy for rt in self.jobs.values())

    async def pump(self) -> None:
        """Issue expansions round-robin over running jobs, one per job per turn (fair share)."""
        async with self._pump_lock:
            while self.in_flight_total() < self.settings.max_in_flight:
                order = sorted(self.jobs)
                if not order:
                    return
                issued_any = False
                start = self._rr % len(order)
                for job_id in order[start:] + order[:start]:
                    if self.in_flight_total() >= self.settings.max_in_flight:
                        break
                    if job_id in self.jobs and await self._issue_one(self.jobs[job_id]):
                        issued_any = True
                self._rr += 1
                if not issued_any:
                    return

    async def _issue_one(self, rt: JobRuntime) -> bool:
        if rt.busy >= rt.parallelism:
            return False
        with self.factory() as s:
            job = s.get(JobRow, rt.job_id)
            if job is None or job.state != job_pb2.RUNNING:
                return False
            if not rt.termination.may_issue(rt.progress(job), rt.config):
                return False
            decision = job.decisions
            models = list(rt.config.get("models") or [])
            model = model_for(models, db.model_observations(s, job.id) if len(models) > 1 else [],
                              seed=derived_seed(rt.state.seed, decision, "model"))
        rt.state.decisions = decision
        rt.sync_pending()
        # No await between this read and the write below: nothing else in this process can
        # change the job in between, and the controller is the DB's only writer.
        failed = ""
        try:
            selection = rt.policy.select(rt.state, rng_for(rt.state.seed, decision))
        except Exception as exc:   # a policy bug must end its job, not spin the engine
            log.error("policy failed", job_id=rt.job_id, error=repr(exc))
            failed = repr(exc)
        if failed:
            await self.finish(rt.job_id, f"policy error: {failed}")
            return False
        with self.factory.begin() as s:
            job = s.get(JobRow, rt.job_id, with_for_update=True)
            assert job is not None
            parent = rt.state.nodes.get(selection.parent_id) if selection.parent_id else None
            exp = ExpansionRow(
                id=f"{rt.job_id}-x{decision}", job_id=rt.job_id, parent_id=parent.node_id if parent else "",
                context_mode=selection.context_mode, decision=decision,
                generation=parent.generation + 1 if parent else 0,
                model=model,
            )
            s.add(exp)
            job.decisions = decision + 1
            job.policy_state = dict(rt.state.policy_state)
        rt.state.decisions = decision + 1
        rt.in_flight[exp.id] = exp.parent_id
        rt.sync_pending()
        metrics.IN_FLIGHT.labels(rt.job_id).set(len(rt.in_flight))
        self._unpublished.add(exp.id)
        await self._publish_expansion(exp.id)
        return True

    async def _publish_expansion(self, expansion_id: str) -> None:
        with self.factory() as s:
            exp = s.get(ExpansionRow, expansion_id)
            job = s.get(JobRow, exp.job_id) if exp else None
            if exp is None or job is None:
                self._unpublished.discard(expansion_id)
                return
            req = expand_request(s, job, exp, n_ancestors=self.settings.ancestors,
                                 n_siblings=self.settings.siblings, n_elites=self.settings.elites)
        try:
            await self.bus.publish(subjects.EXPAND, req, msg_id=exp.id)
        except Exception as exc:  # left unpublished: the loop retries it
            log.warning("expand publish failed; will retry", expansion=exp.id, error=repr(exc))
            return
        with self.factory.begin() as s:
            row = s.get(ExpansionRow, expansion_id)
            if row is not None:
                row.published = True
        self._unpublished.discard(expansion_id)
        log.info("expansion issued", job_id=exp.job_id, expansion=exp.id, parent=exp.parent_id or "<spec>",
                 mode=common_pb2.ContextMode.Name(exp.context_mode))

    async def _republish(self) -> None:
        for expansion_id in sorted(self._unpublished):
            await self._publish_expansion(expansion_id)

    # ---- results -----------------------------------------------------------------------

    async def on_candidate(self, msg: work_pb2.CandidateGenerated, delivery: Delivery) -> None:
        rt = self.jobs.get(msg.job_id)
        with self.factory.begin() as s:
            job = s.get(JobRow, msg.job_id, with_for_update=True)
            if job is None:
                log.warning("candidate for an unknown job dropped", job_id=msg.job_id)
                return
            existing = s.scalars(select(NodeRow).where(NodeRow.expansion_id == msg.expansion_id)).first() \
                if msg.expansion_id else None
            if existing is not None:
                node_id, created = existing.id, False   # redelivered: the node exists already
            else:
                node = new_node(s, job, msg, rt, get_platform(self.kb_dir, job.platform))
                node_id, created = node.id, True
        if rt is not None:
            rt.in_flight.pop(msg.expansion_id, None)
            rt.sync_pending()
            metrics.IN_FLIGHT.labels(rt.job_id).set(len(rt.in_flight))
        await self._dispatch(node_id)
        if created:
            await self._after(msg.job_id, node_id, "candidate", f"candidate from expansion {msg.expansion_id}")
        if msg.job_cannot_continue and msg.job_id in self.jobs:
            # Every model this job may use refuses its requests the same way: say so now rather
            # than spend the rest of its budget on NO_CODE nodes.
            await self.finish(msg.job_id, msg.error or "the generator cannot serve this job")

    async def on_evaluated(self, msg: evaluation_pb2.EvaluationResult, delivery: Delivery) -> None:
        rt = self.jobs.get(msg.job_id)
        improved = False
        with self.factory.begin() as s:
            node = s.get(NodeRow, msg.node_id, with_for_update=True)
            if node is None:
                log.warning("result for an unknown node dropped", node_id=msg.node_id)
                return
            if not msg.attempt or msg.attempt != node.attempt or node.status not in (
                    job_pb2.SCREENING, job_pb2.EVALUATING):
                # Fenced: a redelivered or superseded result. The node has moved on; make sure
                # the request for where it is now went out (a crash may have come in between).
                metrics.FENCED.labels(subjects.EVALUATED).inc()
                log.info("stale result ignored", node_id=node.id, attempt=msg.attempt, current=node.attempt)
                stale = True
            else:
                stale = False
                job = s.get(JobRow, node.job_id, with_for_update=True)
                assert job is not None
                measured = get_platform(self.kb_dir, job.platform).speed == "measured"
                improved = apply_result(s, job, node, msg, rt, self.settings.profile,
                                        confirm=self.settings.confirm_best and measured)
        await self._dispatch(msg.node_id)
        if not stale:
            kind = "evaluated" if msg.stage != SCREEN or msg.verdict != common_pb2.PASSED else "screened"
            await self._after(msg.job_id, msg.node_id, kind, f"{msg.stage}: "
                              f"{common_pb2.Verdict.Name(msg.verdict)} {msg.reason[:200]}".strip())
            if improved:
                await self._after(msg.job_id, msg.node_id, "best", "new best kernel")

    async def on_profiled(self, msg: profile_pb2.ProfileResult, delivery: Delivery) -> None:
        with self.factory.begin() as s:
            node = s.get(NodeRow, msg.node_id, with_for_update=True)
            if node is None or node.status != job_pb2.PROFILING:
                metrics.FENCED.labels(subjects.PROFILED).inc()
                return
            node.profile_report_key = msg.report_key
            node.profile_summary = (msg.summary or (f"profiling failed: {msg.error}" if msg.error else ""))[:2000]
            node.status = job_pb2.DONE
        await self._after(msg.job_id, msg.node_id, "profiled", node.profile_summary[:200])

    async def _dispatch(self, node_id: str) -> None:
        """Publish the request the node waits for, unless it already went out."""
        with self.factory() as s:
            node = s.get(NodeRow, node_id)
            job = s.get(JobRow, node.job_id) if node else None
            if node is None or job is None:
                return
            stage = pending_stage(node)
            if stage is None:
                return
            if job.state == job_pb2.CANCELLED:
                return   # a cancelled job starts no new work
            if stage == PROFILE:
                subject, req = profile_target(job, node)
            else:
                subject, req = eval_target(job, node, get_platform(self.kb_dir, job.platform))
            attempt = node.attempt
        await self.bus.publish(subject, req, msg_id=attempt)
        with self.factory.begin() as s:
            row = s.get(NodeRow, node_id, with_for_update=True)
            if row is not None and row.attempt == attempt:
                row.dispatched_attempt = attempt
                if stage != PROFILE:
                    log.info("evaluation requested", node_id=node_id, stage=stage, subject=subject)

    async def _after(self, job_id: str, node_id: str, kind: str, message: str) -> None:
        with self.factory() as s:
            job = s.get(JobRow, job_id)
            node = s.get(NodeRow, node_id)
            if job is None or node is None:
                return
            job_msg, node_msg = job_to_proto(job), node_to_proto(node)
        await self.hub.emit(kind, job_msg, message, node_msg)
        await self._check_end(job_id)
        self.wake()

    # ---- ending ------------------------------------------------------------------------

    async def _check_pools(self) -> None:
        """End the jobs whose evaluations no pool has taken for ``pool_wait_s``, naming it."""
        if not self.jobs:
            return
        stalled = await self.pools.stalled(s for rt in self.jobs.values() for s in subjects_of(rt.platform))
        for job_id, rt in list(self.jobs.items()):
            for subject in subjects_of(rt.platform):
                if subject in stalled:
                    log.warning("no pool takes the job's work", job_id=job_id, subject=subject)
                    await self.finish(job_id, stall_reason(rt.platform.name, subject, stalled[subject]))
                    break

    async def _check_end(self, job_id: str) -> None:
        rt = self.jobs.get(job_id)
        if rt is None:
            return
        with self.factory() as s:
            job = s.get(JobRow, job_id)
            if job is None:
                return
            reason = rt.termination.check(rt.progress(job), rt.config)
        if reason:
            await self.finish(job_id, reason)

    async def finish(self, job_id: str, reason: str, cancelled: bool = False) -> JobRow | None:
        with self.factory.begin() as s:
            job = s.get(JobRow, job_id, with_for_update=True)
            if job is None:
                return None
            if job.state == job_pb2.RUNNING:
                job.state = job_pb2.CANCELLED if cancelled else (
                    job_pb2.SUCCEEDED if job.passed > 0 else job_pb2.FAILED)
                job.end_reason = reason
                ended = True
            else:
                ended = False
        self.jobs.pop(job_id, None)
        self._unpublished = {e for e in self._unpublished if not e.startswith(job_id + "-")}
        metrics.forget_job(job_id)
        if ended:
            log.info("job ended", job_id=job_id, state=job_pb2.JobState.Name(job.state), reason=reason)
            await self.hub.emit("ended", job_to_proto(job), reason)
            self._refresh_job_gauge()
        return job

    def _refresh_job_gauge(self) -> None:
        with self.factory() as s:
            counts = dict(s.execute(select(JobRow.state, func.count()).group_by(JobRow.state)).tuples().all())
        for value in job_pb2.JobState.values():
            if value:
                metrics.JOBS.labels(job_pb2.JobState.Name(value)).set(counts.get(value, 0))

    # ---- API-side operations ------------------------------------------------------------

    async def start_job(self, job_id: str) -> None:
        with self.factory() as s:
            job = s.get(JobRow, job_id)
            assert job is not None
            self._load(s, job)
        await self.hub.emit("submitted", job_to_proto(job), f"job submitted on {job.platform}")
        self._refresh_job_gauge()
        self.wake()

    async def approve(self, job_id: str, node_id: str) -> NodeRow:
        """A user vouches for a SUSPICIOUS node: it becomes eligible for best."""
        improved = False
        with self.factory.begin() as s:
            node = s.get(NodeRow, node_id, with_for_update=True)
            job = s.get(JobRow, job_id, with_for_update=True)
            if node is None or job is None or node.job_id != job_id:
                raise KeyError(node_id)
            if node.verdict != common_pb2.SUSPICIOUS:
                raise ValueError(f"node {node_id} is {common_pb2.Verdict.Name(node.verdict)}, not SUSPICIOUS")
            if not node.approved:
                node.approved = True
                job.passed += 1
                if node.fitness > job.best_fitness:
                    job.best_fitness, job.best_node_id, improved = node.fitness, node.id, True
                if job.state == job_pb2.FAILED:
                    job.state = job_pb2.SUCCEEDED
                rt = self.jobs.get(job_id)
                if rt is not None:
                    rt.state.nodes[node.id] = to_graph_node(node, True)
        await self._after(job_id, node_id, "approved", "suspicious candidate approved by the user")
        if improved:
            await self._after(job_id, node_id, "best", "new best kernel (approved)")
        return node

    def close(self) -> None:
        self.jobs.clear()
