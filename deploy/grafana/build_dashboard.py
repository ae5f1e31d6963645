"""Build the kevolve fleet dashboard (deploy/grafana/kevolve-fleet.json) from code.

    .venv/bin/python deploy/grafana/build_dashboard.py          # rewrite the JSON
    .venv/bin/python deploy/grafana/build_dashboard.py --check  # fail if it is stale

Panels are built with grafana-foundation-sdk's typed builders; every query reads metrics
the services export (names in docs/architecture.md; tests/deploy/test_grafana.py checks
them against the metric definitions in the code). The labels ``component`` and ``pool``
come from the Prometheus scrape config (deploy/prometheus/prometheus.yml).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grafana_foundation_sdk.builders import dashboard, prometheus, stat, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import GraphDrawStyle, StackingMode
from grafana_foundation_sdk.builders.common import StackingConfig
from grafana_foundation_sdk.models.dashboard import DataSourceRef, VariableRefresh

OUT = Path(__file__).resolve().parent / "kevolve-fleet.json"
UID = "kevolve-fleet"
DS = DataSourceRef(type_val="prometheus", uid="${datasource}")
PLATFORM = 'platform=~"$platform"'
WIDTH = 24


def query(expr: str, legend: str = "", ref: str = "A") -> prometheus.Dataquery:
    return prometheus.Dataquery().expr(expr).legend_format(legend or "__auto").ref_id(ref).datasource(DS)


def series(title: str, description: str, unit: str, *queries: prometheus.Dataquery,
           width: int = 12, stacked: bool = False) -> timeseries.Panel:
    panel = (timeseries.Panel().title(title).description(description).unit(unit).datasource(DS)
             .height(8).span(width).fill_opacity(10).line_width(1).draw_style(GraphDrawStyle.LINE))
    if stacked:
        panel = panel.stacking(StackingConfig().mode(StackingMode.NORMAL)).fill_opacity(60)
    for q in queries:
        panel = panel.with_target(q)
    return panel


def single(title: str, description: str, unit: str, expr: str, width: int = 4) -> stat.Panel:
    return (stat.Panel().title(title).description(description).unit(unit).datasource(DS)
            .height(4).span(width).with_target(query(expr)))


def quantiles(metric: str, by: str, selector: str = "") -> list[prometheus.Dataquery]:
    """p50/p95/p99 from a Prometheus histogram (*_seconds_bucket)."""
    inner = f"sum by (le, {by}) (rate({metric}_bucket{{{selector}}}[$__rate_interval]))"
    return [query(f"histogram_quantile({q}, {inner})", f"p{int(q * 100)} {{{{{by}}}}}", ref)
            for q, ref in ((0.5, "A"), (0.95, "B"), (0.99, "C"))]


def build() -> dict[str, object]:
    board = (
        dashboard.Dashboard("kevolve fleet: search throughput")
        .uid(UID)
        .description("Candidates, evaluator pools, queues, latency and LLM spend of the kevolve fleet")
        .tags(["kevolve"])
        .refresh("30s")
        .time("now-6h", "now")
        .timezone("utc")
        .with_variable(dashboard.DatasourceVariable("datasource").label("Prometheus").type("prometheus"))
        .with_variable(
            dashboard.QueryVariable("platform").label("Platform").datasource(DS)
            .query("label_values(kevolve_evaluator_evaluations_total, platform)")
            .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED).multi(True).include_all(True).all_value(".*"))
    )
    rows: list[tuple[str, list[object]]] = [
        ("Search throughput", [
            single("Running jobs", "Jobs the controller is searching for now", "none",
                   'sum(kevolve_controller_jobs{state="RUNNING"})'),
            single("Queued jobs", "Jobs waiting for expansion capacity", "none",
                   'sum(kevolve_controller_jobs{state="QUEUED"})'),
            single("Candidates / min", "Candidates that got a final verdict, all platforms", "none",
                   f"sum(rate(kevolve_controller_candidates_total{{{PLATFORM}}}[$__rate_interval])) * 60"),
            single("Pass rate (range)", "Share of final verdicts that are PASSED over the range", "percentunit",
                   f'sum(increase(kevolve_controller_candidates_total{{{PLATFORM}, verdict="PASSED"}}[$__range]))'
                   f" / sum(increase(kevolve_controller_candidates_total{{{PLATFORM}}}[$__range]))"),
            single("Best speedup", "Highest fitness (speedup over torch.compile) of any live job", "suffix:x",
                   "max(kevolve_controller_best_fitness)"),
            single("LLM spend (range)", "Dollars spent on LLM calls over the selected range", "currencyUSD",
                   "sum(increase(kevolve_llm_cost_usd_total[$__range]))"),
            series("Candidates per minute by platform and verdict",
                   "Final verdicts recorded by the controller", "none",
                   query(f"sum by (platform, verdict) (rate(kevolve_controller_candidates_total{{{PLATFORM}}}"
                         f"[$__rate_interval])) * 60", "{{platform}} {{verdict}}"), stacked=True),
            series("Evaluations per minute by platform, stage and verdict",
                   "What the evaluator pools finished (screen and full stages)", "none",
                   query(f"sum by (platform, stage, verdict) (rate(kevolve_evaluator_evaluations_total"
                         f"{{{PLATFORM}}}[$__rate_interval])) * 60", "{{platform}}/{{stage}} {{verdict}}"),
                   stacked=True),
            series("Best speedup per job", "Best fitness so far (speedup over torch.compile; 0 = none passed)",
                   "suffix:x", query("topk(10, kevolve_controller_best_fitness)", "{{job_id}}")),
            series("Expansions in flight", "Expansions issued whose candidate has not come back, per job",
                   "none", query("sum by (job_id) (kevolve_controller_expansions_in_flight)", "{{job_id}}")),
            series("Pass rate over time", "Share of final verdicts that are PASSED, per platform", "percentunit",
                   query(f'sum by (platform) (rate(kevolve_controller_candidates_total{{{PLATFORM}, verdict="PASSED"}}'
                         f"[$__rate_interval])) / sum by (platform) (rate(kevolve_controller_candidates_total"
                         f"{{{PLATFORM}}}[$__rate_interval]))", "{{platform}}")),
        ]),
        ("GPUs", [
            series("GPU busy timing candidates", "Share of time each GPU pool's workers held their GPU to time "
                   "candidates and baselines (one GPU per worker: the rate of kevolve_evaluator_gpu_seconds_total, "
                   "averaged over a pool's pods)", "percentunit",
                   query(f"avg by (platform) (rate(kevolve_evaluator_gpu_seconds_total{{{PLATFORM}}}"
                         f"[$__rate_interval]))", "{{platform}}")),
            series("GPU utilization (DCGM)", "Hardware utilisation of the GPUs the pools run on, from NVIDIA's "
                   "dcgm-exporter where the cluster runs it", "percent",
                   query('avg by (Hostname, gpu) (DCGM_FI_DEV_GPU_UTIL{namespace="kevolve"})', "{{Hostname}} {{gpu}}"),
                   query('avg by (Hostname, gpu) (DCGM_FI_DEV_MEM_COPY_UTIL{namespace="kevolve"})',
                         "memory {{Hostname}} {{gpu}}", "B")),
        ]),
        ("Evaluator pools and queues", [
            series("Evaluator utilization", "Share of evaluator slots busy (concurrency 1: share of pods busy)",
                   "percentunit", query(f"avg by (platform) (kevolve_evaluator_busy{{{PLATFORM}}})", "{{platform}}")),
            series("Evaluator replicas up", "Evaluator pods answering scrapes, per pool", "none",
                   query('sum by (pool) (up{job="kevolve", component="evaluator"})', "{{pool}}")),
            series("Queue lag (JetStream consumer pending)", "Messages waiting per work subject; KEDA scales on this",
                   "none", query("max by (subject) (kevolve_bus_consumer_pending)", "{{subject}}")),
            series("Delivered, not yet acked", "Messages a consumer holds (in progress)", "none",
                   query("max by (subject) (kevolve_bus_consumer_ack_pending)", "{{subject}}")),
            series("Bus outcomes per minute", "ok / retried / gave_up / malformed, per subject", "none",
                   query("sum by (subject, outcome) (rate(kevolve_bus_messages_total[$__rate_interval])) * 60",
                         "{{subject}} {{outcome}}")),
            series("Sandbox kills and worker restarts per hour", "Candidates killed by a limit; evaluator workers restarted",
                   "none",
                   query(f"sum by (platform, reason) (rate(kevolve_evaluator_sandbox_kills_total{{{PLATFORM}}}"
                         f"[$__rate_interval])) * 3600", "kill {{platform}} {{reason}}"),
                   query(f"sum by (platform) (rate(kevolve_evaluator_worker_restarts_total{{{PLATFORM}}}"
                         f"[$__rate_interval])) * 3600", "restart {{platform}}", "B")),
        ]),
        ("Latency", [
            series("Evaluation time", "Wall time of one evaluation (p50/p95/p99)", "s",
                   *quantiles("kevolve_evaluator_seconds", "platform", PLATFORM)),
            series("Queue wait", "Time a work message waited before a consumer took it", "s",
                   *quantiles("kevolve_bus_queue_wait_seconds", "subject")),
            series("Handler time per hop", "Time a handler spent on one work message", "s",
                   *quantiles("kevolve_bus_handle_seconds", "subject")),
            series("Generation time", "Time to produce one candidate, by backend", "s",
                   *quantiles("kevolve_generator_seconds", "backend")),
            series("Retrieval time", "Diagnosis + retrieval + prompt rendering", "s",
                   *quantiles("kevolve_retriever_seconds", "component")),
            series("Profiling time", "Wall time of one profile", "s",
                   *quantiles("kevolve_profiler_seconds", "platform", PLATFORM)),
        ]),
        ("LLM", [
            series("LLM spend per hour by model", "Dollars per hour at the current rate", "currencyUSD",
                   query("sum by (model) (rate(kevolve_llm_cost_usd_total[$__rate_interval])) * 3600", "{{model}}")),
            series("LLM tokens per minute", "Prompt and completion tokens by model", "none",
                   query("sum by (model, kind) (rate(kevolve_llm_tokens_total[$__rate_interval])) * 60",
                         "{{model}} {{kind}}")),
            series("Generator outcomes per minute", "Candidates produced (or not), by backend", "none",
                   query("sum by (backend, outcome) (rate(kevolve_generator_candidates_total[$__rate_interval])) * 60",
                         "{{backend}} {{outcome}}")),
            series("Prompts per minute", "Prompts rendered by the retriever, by platform and category", "none",
                   query(f"sum by (platform, category) (rate(kevolve_retriever_prompts_total{{{PLATFORM}}}"
                         f"[$__rate_interval])) * 60", "{{platform}} {{category}}")),
            series("Profiles per minute", "Profiles finished, by platform and outcome", "none",
                   query(f"sum by (platform, outcome) (rate(kevolve_profiler_profiles_total{{{PLATFORM}}}"
                         f"[$__rate_interval])) * 60", "{{platform}} {{outcome}}")),
        ]),
    ]
    for title, panels in rows:
        board = board.with_row(dashboard.Row(title))
        for panel in panels:
            board = board.with_panel(panel)  # type: ignore[arg-type]
    return json.loads(json.dumps(board.build(), cls=JSONEncoder))


def render() -> str:
    return json.dumps(build(), indent=2, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed JSON is stale")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is stale: run python {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
