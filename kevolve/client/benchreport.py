"""Benchmark-suite results: the data model, its JSON form, the totals, and the markdown/HTML report.

The runner (kevolve/client/bench.py) fills a ``BenchResult`` from the JobService; this module
only reads it, so a GPU run's raw JSON can be committed and re-rendered anywhere.

Honesty rules the report enforces (a user reads these numbers as claims):
- On a platform without speed (cpu interpreter) it reports correctness only, never a time.
- A spec whose best kernel is not faster than torch.compile, or has no correct kernel, is
  reported as "falls back to PyTorch (<reason>)"; its fallback speedup is 1.0, not more.
- Bandwidth and FLOP/s fractions appear only when the copy bandwidth / peak were given.
"""

from __future__ import annotations

import html
import json
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class CaseTiming:
    """One shape of one spec, as the evaluator measured it for the best node."""

    name: str
    sizes: dict[str, int] = field(default_factory=dict)
    passed: bool = False
    candidate_ms: float = 0.0
    eager_ms: float = 0.0
    compile_ms: float = 0.0
    bytes_moved: float = 0.0
    flops: float = 0.0
    simulated: bool = False
    # Host time a call needed to issue its work on the evaluator host (CUDA timer; 0 = not
    # recorded). Not part of the times above, which are GPU times: shown beside them.
    candidate_host_ms: float = 0.0
    compile_host_ms: float = 0.0
    # Per call when called back to back, host included (the evaluator's call-loop view; 0 =
    # not measured, as in reports from before it existed).
    candidate_loop_ms: float = 0.0
    compile_loop_ms: float = 0.0


@dataclass
class SpecResult:
    """What one job on one suite spec produced."""

    spec: str
    job_id: str = ""
    state: str = ""                 # JobState name, or "NOT_RUN" when the runner could not submit
    end_reason: str = ""
    best_node_id: str = ""
    best_verdict: str = ""          # Verdict name of the best node
    correct: bool = False
    speed_measured: bool = False
    cases: list[CaseTiming] = field(default_factory=list)
    main_case: str = ""             # which case is the spec's production shape
    main_is_production: bool = True  # False: the production shape had no timing, main_case is another
    candidates: int = 0
    evaluated: int = 0
    passed: int = 0
    wall_s: float = 0.0             # submit -> terminal state
    device_s: float = 0.0           # summed evaluation durations on the target platform
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    error: str = ""                 # runner-side failure (submit refused, timeout...)
    failures: str = ""              # when no kernel is correct: the commonest verdicts and reason
    # The precision the best kernel's tl.dot products ask for ("" when it has none), and whether
    # the job allowed TF32: stated beside every kernel the report credits.
    precision: str = ""
    tf32_allowed: bool = False
    # Candidates this spec's job was allowed; 0: the report's budget. A cpu report resumed or
    # merged at another budget keeps each spec's own (correctness alone: the verdicts compare).
    budget: int = 0

    def with_budget(self, budget: int) -> SpecResult:
        """This result with its budget recorded (``budget``: its run's, where it has none)."""
        self.budget = self.budget or budget
        return self

    def main(self) -> CaseTiming | None:
        for case in self.cases:
            if case.name == self.main_case:
                return case
        return self.cases[0] if self.cases else None


@dataclass
class BenchResult:
    platform: str
    suite: str = ""
    budget: int = 0
    policy: str = ""
    started_at: float = 0.0
    finished_at: float = 0.0
    device: str = ""                # e.g. the GPU name from the evaluator's environment
    copy_bw_gbs: float | None = None  # measured device copy bandwidth (read + write), GB/s
    peak_tflops: float | None = None  # peak FLOP/s used for compute-bound specs, TFLOP/s
    # What the evaluator recorded about the machine (GPU, driver, clocks, torch, Triton...).
    environment: dict[str, str] = field(default_factory=dict)
    # torch.compile times of the same specs measured alone on the same GPU model ("spec/case" ->
    # ms; bench/suite/measure_baselines.py), and where they came from. When present, a kernel
    # is credited with the smaller of its in-run and its isolated speedup (see spec_row).
    isolated_compile_ms: dict[str, float] = field(default_factory=dict)
    isolated_source: str = ""
    # The service settings that shape a measurement (MEASUREMENT_SETTINGS), as the run had them
    # where they differ from the defaults: a reader can tell what a figure was measured with.
    settings: dict[str, str] = field(default_factory=dict)
    specs: list[SpecResult] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> BenchResult:
        raw = json.loads(text)
        specs = []
        for s in raw.pop("specs", []):
            cases = [CaseTiming(**c) for c in s.pop("cases", [])]
            specs.append(SpecResult(**s, cases=cases))
        return cls(**raw, specs=specs)

    def merged(self, *later: BenchResult) -> BenchResult:
        """One report from runs of parts of a suite: a spec run again replaces its earlier result.

        The runs must share platform, budget, policy and service settings (a report mixing them
        would compare unlike searches); machine facts come from the first run that recorded them.
        On the cpu platform, which measures correctness alone, the settings (how many candidates
        are judged at once) and the budget change no verdict's meaning: runs with different ones
        merge, the report lists every value each setting had and each spec keeps its budget."""
        out = BenchResult(**{**asdict(self), "specs": []})
        out.specs = [s.with_budget(self.budget) for s in self.specs]
        for run in later:
            checked = ("platform", "policy") + (() if out.platform == "cpu" else ("settings", "budget"))
            for attr in checked:
                if getattr(run, attr) != getattr(out, attr):
                    raise ValueError(f"cannot merge runs with different {attr}: "
                                     f"{getattr(out, attr)!r} and {getattr(run, attr)!r}")
            for name, value in run.settings.items():
                values = out.settings.get(name, "").split(" | ") if out.settings.get(name) else []
                out.settings[name] = " | ".join(values + ([value] if value not in values else []))
            names = {s.spec for s in run.specs}
            out.specs = [s for s in out.specs if s.spec not in names] + [s.with_budget(run.budget) for s in run.specs]
            out.device = out.device or run.device
            out.environment = out.environment or dict(run.environment)
            out.copy_bw_gbs = out.copy_bw_gbs or run.copy_bw_gbs
            out.peak_tflops = out.peak_tflops or run.peak_tflops
            out.started_at = min(out.started_at, run.started_at) if out.started_at else run.started_at
            out.finished_at = max(out.finished_at, run.finished_at)
        out.specs.sort(key=lambda s: s.spec)
        return out


# Settings of the services that change what a GPU run measures or how many candidates it
# judges in its time: candidates prepared at once per GPU, the second timing of a would-be
# best, which nodes are profiled (a profile holds the GPU), the work in flight, ncu's scope.
MEASUREMENT_SETTINGS = ("KEVOLVE_EVALUATOR_CONCURRENCY", "KEVOLVE_EVALUATOR_TRIALS", "KEVOLVE_CONTROLLER_CONFIRM_BEST",
                        "KEVOLVE_CONTROLLER_PROFILE", "KEVOLVE_CONTROLLER_MAX_IN_FLIGHT",
                        "KEVOLVE_PROFILER_NCU_MAX_LAUNCHES")


def measurement_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """The MEASUREMENT_SETTINGS an environment sets (``kevolve up`` hands them to the services)."""
    return {name: environ[name] for name in MEASUREMENT_SETTINGS if environ.get(name)}


def load_isolated_baselines(path: Path) -> dict[str, float]:
    """``"spec/case" -> torch.compile ms`` from a suite_baselines_*.json of measure_baselines.py."""
    raw = json.loads(path.read_text())
    rows = raw.get("rows") if isinstance(raw, dict) else None
    if not isinstance(rows, list):
        raise ValueError(f"{path} is not a baselines file of bench/suite/measure_baselines.py (no 'rows')")
    # The GPU time where the file has it (measure_baselines.py since 2026-11-22): the
    # evaluator's in-run figures are GPU times too.
    return {f"{r['spec']}/{r['case']}": float(r.get("compile_gpu_ms") or r["compile_ms"]) for r in rows
            if isinstance(r, dict) and float(r.get("compile_gpu_ms") or r.get("compile_ms") or 0) > 0}


def isolated_production_ms(path: Path) -> dict[str, float]:
    """``spec -> torch.compile ms`` at each spec's production shape (case "default") of a baselines file."""
    return {key.removesuffix("/default"): ms for key, ms in load_isolated_baselines(path).items()
            if key.endswith("/default")}


def measure_copy_bandwidth_gbs() -> float | None:
    """The device's copy bandwidth (read + write) in GB/s, measured as the evaluator measures
    its floor (``kevolve.exec.gputiming``); None without a GPU.

    torch is imported here only, so reading and rendering results needs nothing but the stdlib."""
    import torch

    if not torch.cuda.is_available():
        return None
    from kevolve.exec.gputiming import copy_bandwidth_gbs

    return copy_bandwidth_gbs()


# --------------------------------------------------------------------------- per spec


@dataclass
class SpecRow:
    """A spec's line of the report: derived numbers, with None where they do not exist."""

    spec: str
    correct: bool
    verdict: str
    eager_ms: float | None
    compile_ms: float | None
    kernel_ms: float | None
    speedup_eager: float | None
    speedup_compile: float | None
    bw_frac: float | None
    flops_frac: float | None
    compute_bound: bool
    uses_kernel: bool
    note: str
    compile_iso_ms: float | None = None      # torch.compile measured alone (isolated baselines)
    speedup_iso: float | None = None         # isolated torch.compile / kernel
    speedup_loop: float | None = None        # torch.compile / kernel per call in a back-to-back loop

    @property
    def credited(self) -> float | None:
        """The speedup the totals count: the smaller of the in-run and the isolated one."""
        if self.speedup_compile is None:
            return None
        return min(self.speedup_compile, self.speedup_iso) if self.speedup_iso else self.speedup_compile


def _has_speed(result: BenchResult, spec: SpecResult) -> bool:
    return spec.speed_measured and result.platform != "cpu"


def spec_row(result: BenchResult, spec: SpecResult) -> SpecRow:
    verdict = spec.best_verdict or spec.state or "NOT_RUN"
    case = spec.main()
    timed = (_has_speed(result, spec) and spec.correct and case is not None
             and case.candidate_ms > 0 and case.compile_ms > 0)
    if not timed or case is None:
        if spec.error:
            note = f"falls back to PyTorch (not run: {spec.error})"
        elif not spec.correct:
            why = "; ".join(x for x in (spec.end_reason or verdict, spec.failures) if x)
            note = f"falls back to PyTorch (no correct kernel: {why})"
        elif not _has_speed(result, spec):
            note = "correct (no speed on this platform)"
        else:
            note = "falls back to PyTorch (no timing for the production shape)"
        return SpecRow(spec.spec, spec.correct, verdict, None, None, None, None, None, None, None, False,
                       False, note)
    s_compile = case.compile_ms / case.candidate_ms
    s_eager = case.eager_ms / case.candidate_ms if case.eager_ms > 0 else None
    seconds = case.candidate_ms * 1e-3
    bw_frac = (case.bytes_moved / seconds / (result.copy_bw_gbs * 1e9)
               if result.copy_bw_gbs and case.bytes_moved > 0 else None)
    compute_bound = False
    flops_frac = None
    if result.peak_tflops and result.copy_bw_gbs and case.bytes_moved > 0:
        # Roofline ridge: above peak/bandwidth FLOPs per byte, the spec is limited by compute.
        ridge = result.peak_tflops * 1e12 / (result.copy_bw_gbs * 1e9)
        compute_bound = case.flops / case.bytes_moved > ridge
        if compute_bound:
            flops_frac = case.flops / seconds / (result.peak_tflops * 1e12)
    iso = result.isolated_compile_ms.get(f"{spec.spec}/{case.name}")
    s_iso = iso / case.candidate_ms if iso else None
    credited = min(s_compile, s_iso) if s_iso else s_compile
    uses_kernel = credited > 1.0
    shape = ("" if spec.main_is_production else
             f" [timed on the {case.name} shape: the production shape was not timed in this run]")
    if uses_kernel:
        note = f"kernel {credited:.2f}x faster than torch.compile"
        if s_iso and s_iso < s_compile:
            note += f" (vs torch.compile measured alone; {s_compile:.2f}x against the in-run baseline)"
        if case.eager_ms and case.eager_ms < case.candidate_ms:
            # torch.compile is not always the fastest PyTorch path (it loses to eager on some
            # launch-bound and matmul shapes): say so rather than let the speedup read as a win.
            note += f"; eager PyTorch is faster still ({case.eager_ms:.4g} ms)"
    else:
        base = min(case.compile_ms, iso) if iso else case.compile_ms
        note = (f"falls back to PyTorch (best kernel {case.candidate_ms:.4g} ms is not faster than "
                f"torch.compile {base:.4g} ms{' measured alone' if iso and iso < case.compile_ms else ''})")
    s_loop = (case.compile_loop_ms / case.candidate_loop_ms
              if case.candidate_loop_ms > 0 and case.compile_loop_ms > 0 else None)
    if s_loop is not None and uses_kernel and s_loop <= 1.0:
        note += f"; not faster called back to back with its host work ({s_loop:.2f}x in the call loop)"
    if spec.precision:
        note += f"; tl.dot precision {spec.precision}{' (the job allows TF32)' if spec.tf32_allowed else ''}"
    return SpecRow(spec.spec, True, verdict, case.eager_ms or None, case.compile_ms, case.candidate_ms,
                   s_eager, s_compile, bw_frac, flops_frac, compute_bound, uses_kernel, note + shape, iso, s_iso,
                   s_loop)


# --------------------------------------------------------------------------- totals


@dataclass
class Totals:
    specs: int
    correct: int
    correctness_rate: float
    speed: bool                     # False: the platform gives no speed, the fields below are None
    fast_1: float | None            # share of all specs correct AND faster than torch.compile
    fast_1_5: float | None          # ... and at least 1.5x faster
    geomean_speedup: float | None   # over correct, timed specs: best kernel vs torch.compile, raw
    geomean_with_fallback: float | None  # every spec; fallback (PyTorch) counts as 1.0
    candidates: int
    wall_s: float
    device_s: float
    tokens: int
    cost_usd: float
    # The same in the call-loop view (host included), over the specs whose call loop was
    # measured; None where none was.
    fast_1_loop: float | None = None
    geomean_loop_with_fallback: float | None = None
    loop_specs: int = 0


def fast_p(rows: list[SpecRow], p: float) -> float:
    """KernelBench's fast_p: the share of ALL specs that are correct and more than p times faster."""
    if not rows:
        return 0.0
    wins = sum(1 for r in rows if r.correct and r.credited is not None and r.credited > p)
    return wins / len(rows)


def geomean(values: list[float]) -> float | None:
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def totals(result: BenchResult) -> Totals:
    rows = [spec_row(result, s) for s in result.specs]
    n = len(rows)
    correct = sum(1 for r in rows if r.correct)
    speed = result.platform != "cpu" and any(_has_speed(result, s) for s in result.specs)
    timed = [r.credited for r in rows if r.credited is not None]
    with_fallback = [max(1.0, r.credited) if r.credited is not None else 1.0 for r in rows]
    return Totals(
        specs=n, correct=correct, correctness_rate=correct / n if n else 0.0, speed=speed,
        fast_1=fast_p(rows, 1.0) if speed else None,
        fast_1_5=fast_p(rows, 1.5) if speed else None,
        geomean_speedup=geomean(timed) if speed else None,
        geomean_with_fallback=geomean(with_fallback) if speed and rows else None,
        candidates=sum(s.candidates for s in result.specs),
        wall_s=sum(s.wall_s for s in result.specs),
        device_s=sum(s.device_s for s in result.specs),
        tokens=sum(s.prompt_tokens + s.completion_tokens for s in result.specs),
        cost_usd=sum(s.cost_usd for s in result.specs),
        **_loop_totals(rows, speed),
    )


def _loop_totals(rows: list[SpecRow], speed: bool) -> dict[str, float | int | None]:
    """fast_1 and the geomean with fallback in the call-loop view, over the specs it covers
    (every spec where no kernel was correct counts, at 1.0x: it falls back either way)."""
    covered = [r for r in rows if r.speedup_loop is not None or not r.correct]
    if not speed or not any(r.speedup_loop is not None for r in rows):
        return {}
    wins = [r.speedup_loop for r in covered if r.speedup_loop is not None and r.speedup_loop > 1.0]
    return {"fast_1_loop": len(wins) / len(covered), "loop_specs": len(covered),
            "geomean_loop_with_fallback": geomean([max(1.0, r.speedup_loop or 1.0) for r in covered])}


# --------------------------------------------------------------------------- rendering helpers


def _f(value: float | None, fmt: str = "{:.3f}", none: str = "–") -> str:
    return none if value is None else fmt.format(value)


def _pct(value: float | None) -> str:
    return _f(None if value is None else 100 * value, "{:.0f}%")


def _other_budgets(result: BenchResult) -> str:
    """" (201 specs at budget 2)" where specs kept from another run had another budget."""
    others = Counter(s.budget for s in result.specs if s.budget and s.budget != result.budget)
    if not others:
        return ""
    return " (" + ", ".join(f"{n} spec{'s' if n != 1 else ''} at budget {b}" for b, n in sorted(others.items())) + ")"


def _header(result: BenchResult) -> list[str]:
    lines = [f"platform `{result.platform}`" + (f" ({result.device})" if result.device else ""),
             f"suite `{result.suite}`, budget {result.budget} candidates per spec{_other_budgets(result)}, "
             f"policy {result.policy or 'default'}"]
    if result.platform == "cpu" or not any(s.speed_measured for s in result.specs):
        lines.append("This platform measures correctness only (Triton interpreter or no timings): "
                     "no speed is reported.")
    else:
        bw = (f"copy bandwidth {result.copy_bw_gbs:.0f} GB/s (read+write)" if result.copy_bw_gbs
              else "copy bandwidth not measured: no bandwidth fractions")
        peak = (f"peak {result.peak_tflops:.0f} TFLOP/s" if result.peak_tflops
                else "no peak FLOP/s given: no FLOP/s fractions")
        lines.append(f"{bw}; {peak}. Speedups are over the production shape; a kernel not faster than "
                     "torch.compile falls back to PyTorch.")
        if any(c.simulated for s in result.specs for c in s.cases):
            lines.append("Times marked simulated are estimates from a machine model, not measurements.")
    if has_isolated_baselines(result):
        lines.append(f"torch.compile was also measured alone on this GPU model ({result.isolated_source}): "
                     "each kernel is credited with the smaller of its speedup over the in-run baseline "
                     "and over that one, in the notes and in every total.")
    if result.settings:
        lines.append("service settings (other than the defaults): "
                     + ", ".join(f"{k}={v}" for k, v in sorted(result.settings.items())))
    if result.environment:
        keys = ("gpu", "capability", "sm_count", "driver_version", "cuda", "torch", "triton", "clocks.sm",
                "clocks.max.sm", "clocks.mem", "power.limit", "persistence_mode", "peak_copy_gbps")
        facts = [f"{k} {result.environment[k]}" for k in keys if result.environment.get(k)]
        lines.append("environment: " + ", ".join(facts))
    return lines


def _totals_lines(t: Totals) -> list[tuple[str, str]]:
    out = [("specs", str(t.specs)), ("correct", f"{t.correct}/{t.specs} ({100 * t.correctness_rate:.0f}%)")]
    if t.speed:
        out += [("fast_1 (correct and faster than torch.compile)", _pct(t.fast_1)),
                ("fast_1.5 (correct and >1.5x torch.compile)", _pct(t.fast_1_5)),
                ("geomean speedup over torch.compile (correct, timed specs)",
                 _f(t.geomean_speedup, "{:.3f}x")),
                ("geomean speedup with fallback (all specs, fallback = 1.0x)", _f(t.geomean_with_fallback,
                                                                                   "{:.3f}x"))]
        if t.loop_specs:
            out += [(f"call loop, host included ({t.loop_specs} specs): fast_1", _pct(t.fast_1_loop)),
                    (f"call loop, host included ({t.loop_specs} specs): geomean with fallback",
                     _f(t.geomean_loop_with_fallback, "{:.3f}x"))]
    out += [("search cost: candidates", str(t.candidates)),
            ("search cost: job wall time", f"{t.wall_s:.0f} s"),
            ("search cost: evaluation time on the target (GPU time on a GPU platform)",
             f"{t.device_s:.0f} s"),
            ("search cost: LLM tokens / USD", f"{t.tokens} / ${t.cost_usd:.2f}")]
    return out


def has_isolated_baselines(result: BenchResult) -> bool:
    """Whether some spec of the report has a torch.compile time measured alone (keys
    ``spec/case``): a corpus run handed the suite's baselines file has none, and its report
    then neither mentions them nor shows their empty columns."""
    specs = {s.spec for s in result.specs}
    return any(key.split("/", 1)[0] in specs for key in result.isolated_compile_ms)


def render_markdown(result: BenchResult) -> str:
    rows = [spec_row(result, s) for s in result.specs]
    t = totals(result)
    lines = [f"# kevolve benchmark suite: {result.platform}", ""]
    lines += [f"{line}  " for line in _header(result)] + ["", "## Totals", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in _totals_lines(t)]
    lines += ["", "## Per spec", ""]
    if t.speed:
        iso = has_isolated_baselines(result)
        loop = t.loop_specs > 0
        lines += ["| spec | correct | eager ms | torch.compile ms | kernel ms | vs eager | vs compile "
                  + ("| compile alone ms | vs compile alone " if iso else "")
                  + ("| vs compile, call loop " if loop else "")
                  + "| %copy BW | %peak FLOP/s | outcome |", "|---|---|---|---|---|---|---|---|---|---|"
                  + ("---|---|" if iso else "") + ("---|" if loop else "")]
        for r in rows:
            flops_pct = _pct(r.flops_frac) if r.compute_bound else "–"
            alone = (f"| {_f(r.compile_iso_ms, '{:.4g}')} | {_f(r.speedup_iso, '{:.2f}x')} " if iso else "")
            alone += f"| {_f(r.speedup_loop, '{:.2f}x')} " if loop else ""
            lines.append(f"| `{r.spec}` | {'yes' if r.correct else 'no'} ({r.verdict}) "
                         f"| {_f(r.eager_ms, '{:.4g}')} | {_f(r.compile_ms, '{:.4g}')} "
                         f"| {_f(r.kernel_ms, '{:.4g}')} "
                         f"| {_f(r.speedup_eager, '{:.2f}x')} | {_f(r.speedup_compile, '{:.2f}x')} "
                         f"{alone}| {_pct(r.bw_frac)} | {flops_pct} | {r.note} |")
    else:
        lines += ["| spec | correct | verdict | candidates | outcome |", "|---|---|---|---|---|"]
        for r, s in zip(rows, result.specs):
            lines.append(f"| `{r.spec}` | {'yes' if r.correct else 'no'} | {r.verdict} | {s.candidates} "
                         f"| {r.note} |")
    cases = [(s, c) for s in result.specs for c in s.cases]
    if t.speed and cases:
        host = any(c.candidate_host_ms > 0 for _, c in cases)
        lines += ["", "## Per shape (best node of each job)", ""]
        if host:
            lines += ["Times are GPU times. The host column is the time a call took the evaluator's host "
                      "to issue its work (10th percentile, the host busy with other candidates): not "
                      "charged, but a call issued slower than it runs is limited by it in an eager loop.", ""]
        lines += ["| spec | case | sizes | passed | eager ms | torch.compile ms | kernel ms | vs compile "
                  "| runs |" + (" host issue ms: kernel / torch.compile |" if host else ""),
                  "|---|---|---|---|---|---|---|---|---|" + ("---|" if host else "")]
        for s, c in cases:
            # A kernel time is shown only for a correct kernel: an incorrect one's speed means nothing.
            ok = c.passed and s.correct and _has_speed(result, s)
            kernel_ms = c.candidate_ms if ok and c.candidate_ms > 0 else None
            sp = c.compile_ms / kernel_ms if kernel_ms and c.compile_ms > 0 else None
            sizes = ", ".join(f"{k}={v}" for k, v in sorted(c.sizes.items()))
            sim = " (simulated)" if c.simulated and kernel_ms else ""
            runs = "kernel" if sp is not None and sp > 1.0 else "PyTorch (fallback)"
            lines.append(f"| `{s.spec}` | {c.name} | {sizes} | {'yes' if c.passed else 'no'} "
                         f"| {_f(c.eager_ms or None, '{:.4g}')} | {_f(c.compile_ms or None, '{:.4g}')} "
                         f"| {_f(kernel_ms, '{:.4g}')}{sim} | {_f(sp, '{:.2f}x')} | {runs} |"
                         + (f" {_f(c.candidate_host_ms or None, '{:.3f}')} / {_f(c.compile_host_ms or None, '{:.3f}')} |"
                            if host else ""))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- HTML with inline SVG


def svg_bars(title: str, items: list[tuple[str, float | None]], unit: str = "", ref: float | None = None,
             colors: list[str] | None = None) -> str:
    """A horizontal bar chart as inline SVG (no plotting library needed): one bar per label.

    ``None`` values draw no bar and say "n/a"; ``ref`` draws a dashed reference line (1.0x).
    """
    label_w, bar_w, row_h, top = 230, 420, 20, 28
    finite = [v for _, v in items if v is not None and math.isfinite(v)]
    vmax = max(finite + ([ref] if ref else []) + [1e-12])
    height = top + row_h * len(items) + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{label_w + bar_w + 90}" '
             f'height="{height}" role="img" aria-label="{html.escape(title)}">',
             f'<text x="4" y="16" font-weight="bold" font-size="13">{html.escape(title)}</text>']
    for i, (label, value) in enumerate(items):
        y = top + i * row_h
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end" font-size="11">'
                     f'{html.escape(label)}</text>')
        if value is None or not math.isfinite(value):
            parts.append(f'<text x="{label_w + 4}" y="{y + 14}" font-size="11" fill="#888">n/a</text>')
            continue
        w = max(1.0, bar_w * value / vmax)
        color = colors[i] if colors else "#4878d0"
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}" fill="{color}">'
                     f'<title>{html.escape(label)}: {value:.4g}{unit}</title></rect>')
        parts.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 14}" font-size="11">{value:.3g}{unit}</text>')
    if ref:
        x = label_w + bar_w * ref / vmax
        parts.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - 6}" stroke="#c00" '
                     f'stroke-dasharray="4 3"><title>{ref:g}{unit}</title></line>')
    parts.append("</svg>")
    return "\n".join(parts)


def _table(header: list[str], body: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def render_html(result: BenchResult) -> str:
    rows = [spec_row(result, s) for s in result.specs]
    t = totals(result)
    charts: list[str] = []
    if t.speed:
        green, grey = "#3a923a", "#999999"
        charts.append(svg_bars("Speedup of the best kernel over torch.compile (grey: falls back to PyTorch)",
                               [(r.spec, r.credited) for r in rows], "x", ref=1.0,
                               colors=[green if r.uses_kernel else grey for r in rows]))
        if t.loop_specs:
            charts.append(svg_bars("Speedup over torch.compile per call in a back-to-back loop, host included",
                                   [(r.spec, r.speedup_loop) for r in rows], "x", ref=1.0))
        charts.append(svg_bars("Speedup of the best kernel over eager PyTorch",
                               [(r.spec, r.speedup_eager) for r in rows], "x", ref=1.0))
        if result.copy_bw_gbs:
            charts.append(svg_bars("Achieved memory bandwidth, % of measured copy bandwidth",
                                   [(r.spec, None if r.bw_frac is None else 100 * r.bw_frac) for r in rows],
                                   "%", ref=100.0))
        compute = [r for r in rows if r.compute_bound]
        if compute:
            charts.append(svg_bars("Achieved FLOP/s, % of peak (compute-bound specs)",
                                   [(r.spec, None if r.flops_frac is None else 100 * r.flops_frac)
                                    for r in compute], "%", ref=100.0))
        loop = ["vs compile, call loop"] if t.loop_specs else []
        table = _table(["spec", "correct", "eager ms", "torch.compile ms", "kernel ms", "vs eager",
                        "vs compile", *loop, "%copy BW", "%peak FLOP/s", "outcome"],
                       [[r.spec, f"{'yes' if r.correct else 'no'} ({r.verdict})", _f(r.eager_ms, "{:.4g}"),
                         _f(r.compile_ms, "{:.4g}"), _f(r.kernel_ms, "{:.4g}"),
                         _f(r.speedup_eager, "{:.2f}x"), _f(r.speedup_compile, "{:.2f}x"),
                         *([_f(r.speedup_loop, "{:.2f}x")] if loop else []), _pct(r.bw_frac),
                         _pct(r.flops_frac) if r.compute_bound else "–", r.note] for r in rows])
    else:
        # Correctness only: the chart shows how many candidates each spec took, pass in green.
        charts.append(svg_bars("Candidates searched per spec (green: a correct kernel was found)",
                               [(s.spec, float(s.candidates)) for s in result.specs], "",
                               colors=["#3a923a" if r.correct else "#c44e52" for r in rows]))
        table = _table(["spec", "correct", "verdict", "candidates", "outcome"],
                       [[r.spec, "yes" if r.correct else "no", r.verdict, str(s.candidates), r.note]
                        for r, s in zip(rows, result.specs)])
    header = "".join(f"<p>{html.escape(line)}</p>" for line in _header(result))
    tot = _table(["", ""], [[k, v] for k, v in _totals_lines(t)])
    style = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto}table{border-collapse:collapse;"
             "margin:1em 0}td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px}.chart{display:block;"
             "margin:1em 0}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>kevolve bench: "
            f"{html.escape(result.platform)}</title><style>{style}</style></head><body>"
            f"<h1>kevolve benchmark suite: {html.escape(result.platform)}</h1>{header}<h2>Totals</h2>{tot}"
            f"<h2>Per spec</h2>{table}<h2>Plots</h2>{''.join(charts)}</body></html>\n")


def write_report(result: BenchResult, out_dir: Path, stem: str | None = None) -> dict[str, Path]:
    """Write ``suite_<platform>.json/.md/.html`` (or ``<stem>.*``) under out_dir; return the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = stem or f"suite_{result.platform}"
    paths = {"json": out_dir / f"{stem}.json", "md": out_dir / f"{stem}.md", "html": out_dir / f"{stem}.html"}
    paths["json"].write_text(result.to_json())
    paths["md"].write_text(render_markdown(result))
    paths["html"].write_text(render_html(result))
    return paths
