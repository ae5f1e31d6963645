"""What one evaluation will run: the test cases (sizes), and each trial's secret seed and variant."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field

from kevolve.platforms import Platform
from kevolve.specfile import SpecOutline

from .protocol import MACHINE_MODEL_FILE, VARIANTS, Draw, EvalPlan, PlanCase, PlanPlatform, derive_seed

RECHECKS = 2


@dataclass
class EvalJob:
    """An evaluation request, decoupled from the protobuf (the one-shot CLI builds it too)."""

    spec_source: str
    candidate_source: str
    platform: Platform
    stage: str = "full"
    test_cases: list[tuple[str, dict[str, int]]] = field(default_factory=list)
    cpu_sizes: dict[str, int] = field(default_factory=dict)
    atol: float = 0.0
    rtol: float = 0.0
    trials: int = 5
    timeout_s: float = 0.0
    seed: int = 0
    tenant: str = "default"  # whose sandboxes run it: scratch, caches and warm workers are per tenant
    cuda_graphs: bool = False  # the job's model runs under CUDA graphs: GPU time alone decides fitness
    allow_tf32: bool = False  # the job allows TF32 for float32 products: the baselines use it too


def device_of(platform: Platform) -> str:
    return "cuda" if platform.runner == "cuda" else "cpu"


def resolve_cases(job: EvalJob, spec: SpecOutline) -> list[tuple[str, dict[str, int]]]:
    """(name, size overrides) per case; interpreter-run platforms use the screening sizes."""
    declared: list[tuple[str, dict[str, int]]] = list(job.test_cases)
    if not declared:
        for i, case in enumerate(spec.test_cases):
            sizes = case.get("sizes", {})
            if isinstance(sizes, dict):
                declared.append(
                    (str(case.get("name", f"case{i}")), {str(k): int(v) for k, v in sizes.items()})
                )
    # The spec's own sizes (the production shape) are always a case: declared test cases add
    # shapes, they never replace it.
    if not any(all(spec.sizes.get(k) == v for k, v in sizes.items()) for _, sizes in declared):
        declared.insert(0, ("default", {}))
    if job.platform.runner == "cuda":
        return declared
    # The interpreter is slow: screening sizes replace the real ones (request, then spec's
    # cpu_shapes); test cases keep whatever dimensions the screening sizes leave alone.
    small = job.cpu_sizes or spec.cpu_sizes
    cases: list[tuple[str, dict[str, int]]] = []
    seen: set[str] = set()
    for name, sizes in declared:
        merged = {**sizes, **small}
        key = json.dumps(merged, sort_keys=True)
        if key not in seen:
            seen.add(key)
            cases.append((name if not small else (f"cpu:{name}" if len(declared) > 1 else "cpu"), merged))
    return cases


def build_plan(job: EvalJob, spec: SpecOutline) -> EvalPlan:
    """The plan both children read. Seeds come from the request seed (or a secret one)."""
    base = job.seed or secrets.randbits(62)
    cases = []
    for index, (name, sizes) in enumerate(resolve_cases(job, spec)):
        unknown = set(sizes) - set(spec.sizes)
        if unknown:
            raise ValueError(
                f"test case {name!r} sets {', '.join(sorted(unknown))}, "
                "which the spec does not define as a module-level size constant"
            )
        cases.append(PlanCase(
            index=index,
            name=name,
            sizes=sizes,
            full_sizes={**spec.sizes, **sizes},
            state_seed=derive_seed(base, name, "state"),
            timing_seed=derive_seed(base, name, "timing"),
            trials=[Draw(seed=derive_seed(base, name, "trial", i), variant=VARIANTS[i % len(VARIANTS)])
                    for i in range(max(5, job.trials))],
            recheck=[Draw(seed=derive_seed(base, name, "recheck", i), variant=VARIANTS[(i + 1) % len(VARIANTS)])
                     for i in range(RECHECKS)],
        ))
    return EvalPlan(device=device_of(job.platform), platform=PlanPlatform.of(job.platform), cases=cases,
                    machine_model_file=MACHINE_MODEL_FILE if job.platform.machine_model else "",
                    allow_tf32=job.allow_tf32)
