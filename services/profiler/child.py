"""Runs inside the sandboxed profiling child: ``python -m services.profiler.child PLAN.json``.

Loads the spec (and the candidate, unless the reference itself is profiled), runs the
forward and writes what it observed (an ``Observation``) to the plan's ``out``. Modes:

* ``interp``: under TRITON_INTERPRET=1, counts each Triton launch with
  :class:`kevolve.exec.interp_trace.InterpTrace` and the reference's aten ops; with a machine
  model it adds the MTIA-sim estimates of the candidate and of the reference.
* ``torch``: on a GPU, times the forward's kernels with torch.profiler.
* ``ncu_target``: on a GPU, just runs the forward a few times for ``ncu`` to capture.

User code runs only here, never in the service process.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

import torch

from kevolve import specfile
from kevolve.exec import interp_compat
from kevolve.exec.childstatus import ChildFailure

from .protocol import Observation, ProfilePlan


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _nbytes(value: Any) -> int:
    return sum(int(t.numel()) * t.element_size() for t in _tensors(value))


def _load(plan: ProfilePlan, device: str) -> tuple[Any, Any | None, list[Any]]:
    spec_path = Path(plan.spec_path)
    spec = specfile.load_module(spec_path.read_text(), "kv_profile_spec", plan.sizes or None,
                                str(spec_path))
    torch.manual_seed(plan.seed)
    init = spec.get_init_inputs()
    reference = spec.Model(*init).to(device).eval()
    candidate = None
    if plan.candidate_path:
        cand_path = Path(plan.candidate_path)
        module = specfile.load_module(cand_path.read_text(), "kv_profile_candidate", None, str(cand_path))
        if not hasattr(module, "ModelNew"):
            raise specfile.SpecError("the candidate defines no class ModelNew")
        torch.manual_seed(plan.seed)
        candidate = module.ModelNew(*init).to(device).eval()
        # Same weights as the reference where the candidate keeps the same parameters.
        try:
            candidate.load_state_dict(reference.state_dict())
        except (RuntimeError, KeyError):
            pass
    inputs = [v.to(device) if isinstance(v, torch.Tensor) else v for v in spec.get_inputs()]
    return reference, candidate, inputs


def run_interp(plan: ProfilePlan) -> dict[str, Any]:
    from kevolve.exec.interp_trace import InterpTrace
    from kevolve.exec.mtia_sim import aten_counter, estimate, load_machine

    reference, candidate, inputs = _load(plan, "cpu")
    out: dict[str, Any] = {"input_bytes": _nbytes(inputs)}
    with torch.no_grad(), aten_counter() as counter:
        ref_out = reference(*inputs)
    out["output_bytes"] = _nbytes(ref_out)
    out["reference_ops"] = counter.ops
    machine = load_machine(Path(plan.machine_model)) if plan.machine_model else None
    if machine is not None:
        out["baseline_estimate"] = estimate(machine, counter.to_launches(machine)).as_dict()
    if candidate is not None:
        with torch.no_grad(), InterpTrace() as trace:
            candidate(*inputs)
        out["launches"] = [rec.as_dict() for rec in trace.launches]
        out["kernels"] = [vars(s) for s in trace.summaries()]
        if machine is not None:
            out["estimate"] = estimate(machine, trace.launches).as_dict()
    return out


def run_torch(plan: ProfilePlan) -> dict[str, Any]:
    from torch.profiler import ProfilerActivity, profile

    reference, candidate, inputs = _load(plan, "cuda")
    model = candidate if candidate is not None else reference
    iterations = plan.iterations
    with torch.no_grad():
        out_value = model(*inputs)  # first call compiles; not profiled
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(iterations):
                model(*inputs)
            torch.cuda.synchronize()
    kernels = []
    for event in prof.key_averages():
        if event.device_type != torch.autograd.DeviceType.CUDA or event.count == 0:
            continue
        kernels.append({"name": event.key, "launches": event.count / iterations,
                        "device_time_us_total": float(event.device_time_total) / iterations,
                        "device_time_us_per_launch": float(event.device_time_total) / event.count})
    kernels.sort(key=lambda k: -k["device_time_us_total"])
    return {"kernels": kernels, "iterations": iterations, "input_bytes": _nbytes(inputs),
            "output_bytes": _nbytes(out_value), "gpu": torch.cuda.get_device_name(),
            "torch": torch.__version__}


def run_ncu_target(plan: ProfilePlan) -> dict[str, Any]:
    reference, candidate, inputs = _load(plan, "cuda")
    model = candidate if candidate is not None else reference
    with torch.no_grad():
        for _ in range(plan.iterations):
            model(*inputs)
        torch.cuda.synchronize()
    return {"ran": True}


MODES = {"interp": run_interp, "torch": run_torch, "ncu_target": run_ncu_target}


def main() -> None:
    interp_compat.apply()
    plan = ProfilePlan.model_validate_json(Path(sys.argv[1]).read_text())
    try:
        result = Observation(observed=MODES[plan.mode](plan))
    except BaseException as exc:  # noqa: BLE001 - every failure is reported, none escapes silently
        result = Observation(status="fail", failure=ChildFailure(reason=f"{type(exc).__name__}: {exc}"[:4000],
                                                                 traceback=traceback.format_exc()[-8000:]))
    result.write(Path(plan.out))


if __name__ == "__main__":
    main()
