"""The controller's Prometheus metrics (names fixed by docs/architecture.md)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

JOBS = Gauge("kevolve_controller_jobs", "Jobs by state (as this controller last saw them)", ["state"])
CANDIDATES = Counter("kevolve_controller_candidates_total", "Candidates with a final verdict",
                     ["platform", "verdict"])
BEST_FITNESS = Gauge("kevolve_controller_best_fitness", "Best fitness of a job so far", ["job_id"])
IN_FLIGHT = Gauge("kevolve_controller_expansions_in_flight", "Expansions issued, candidate not back yet",
                  ["job_id"])
FENCED = Counter("kevolve_controller_stale_results_total",
                 "Results dropped by the attempt fence (redelivered or superseded)", ["subject"])


def forget_job(job_id: str) -> None:
    """Drop an ended job's series: a fleet that runs thousands of jobs would otherwise keep
    thousands of frozen series per controller."""
    for gauge in (BEST_FITNESS, IN_FLIGHT):
        try:
            gauge.remove(job_id)
        except KeyError:
            pass   # never set for this job
