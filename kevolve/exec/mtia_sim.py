"""MTIA-sim: the machine model of kevolve's simulated accelerator, and its time estimator.

The numbers live in ``kb/hardware/mtia-sim/machine.toml`` (documented in that folder's
markdown). Input is what :mod:`kevolve.exec.interp_trace` counted while a candidate ran under the
Triton interpreter; output is an estimate per launch:

    busy = max(dram, vector, sfu, dot) + waves x program overhead      (units overlap)
    time = launch cost + busy

where each program instance runs on one PE, ``waves = ceil(programs / PEs)``, DRAM time is
the bytes really moved over ``min(chip bandwidth, busy PEs x PE port bandwidth)``, vector
time counts ``ceil(numel / vector_width)`` instructions per op, SFU time elements over the
per-function rate, and dot time FLOPs over the
matrix unit rate. The baseline (the reference) is estimated the same way from its aten ops,
each a separate launch with one DRAM pass (see :class:`AtenCounter`).

Both the evaluator's mtia-sim timing platform and the profiler use this module.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kevolve.exec.interp_trace import LaunchTrace


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PE(_Strict):
    rows: int = Field(gt=0)
    cols: int = Field(gt=0)
    clock_ghz: float = Field(gt=0)
    vector_width: int = Field(gt=0)
    program_overhead_cycles: float = Field(ge=0)


class Memory(_Strict):
    sram_per_pe_kib: float = Field(gt=0)
    dram_bandwidth_gbs: float = Field(gt=0)
    pe_port_bandwidth_gbs: float = Field(gt=0)


class Dot(_Strict):
    flops_per_cycle: float = Field(gt=0)


class Launch(_Strict):
    launch_us: float = Field(ge=0)


class Rules(_Strict):
    live_tiles: int = Field(ge=1)
    compute_bytes: int = Field(ge=1)


class Baseline(_Strict):
    tile_elems: int = Field(gt=0)


class MachineModel(_Strict):
    name: str
    pe: PE
    memory: Memory
    sfu: dict[str, float]
    dot: Dot
    launch: Launch
    rules: Rules
    baseline: Baseline

    @property
    def num_pes(self) -> int:
        return self.pe.rows * self.pe.cols

    @property
    def sram_bytes(self) -> int:
        return int(self.memory.sram_per_pe_kib * 1024)

    def sfu_rate(self, kind: str) -> float:
        # An SFU function the file does not list runs at the slowest listed rate.
        return self.sfu.get(kind, min(self.sfu.values()))


class MachineModelError(ValueError):
    """machine.toml is missing, unparsable, or has a bad value (the message names it)."""


def load_machine(path: Path) -> MachineModel:
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError as exc:
        raise MachineModelError(f"machine model {path} does not exist") from exc
    except tomllib.TOMLDecodeError as exc:
        raise MachineModelError(f"machine model {path} is not valid TOML: {exc}") from exc
    try:
        model = MachineModel.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise MachineModelError(f"machine model {path}: {problems}") from exc
    if not model.sfu or any(v <= 0 for v in model.sfu.values()):
        raise MachineModelError(f"machine model {path}: [sfu] needs positive rates")
    return model


@dataclass
class LaunchEstimate:
    name: str
    programs: int
    time_us: float
    launch_us: float
    dram_us: float
    vector_us: float
    sfu_us: float
    dot_us: float
    overhead_us: float
    limiter: str                 # memory_bound | compute_bound | sfu_bound | launch_bound | latency_bound
    util_dram: float
    util_vector: float
    util_sfu: float
    util_dot: float
    util_pe: float
    sram_bytes: int              # estimated working set of one program instance
    sram_ok: bool


@dataclass
class Estimate:
    machine: str
    launches: list[LaunchEstimate] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    @property
    def time_us(self) -> float:
        return sum(e.time_us for e in self.launches)

    @property
    def time_ms(self) -> float:
        return self.time_us / 1000.0

    @property
    def sram_bytes_per_block(self) -> int:
        return max((e.sram_bytes for e in self.launches), default=0)

    def utilization(self) -> dict[str, float]:
        """Each unit's busy share of the whole estimated time (launch gaps included)."""
        total = self.time_us
        if total <= 0:
            return {}
        return {f"util_{u}": sum(getattr(e, f"util_{u}") * (e.time_us - e.launch_us) for e in self.launches)
                / total
                for u in ("dram", "vector", "sfu", "dot", "pe")}

    @property
    def bottleneck(self) -> str:
        if self.violations:
            return "sram_overflow"
        if not self.launches:
            return "unknown"
        share: dict[str, float] = {}
        for e in self.launches:
            share[e.limiter] = share.get(e.limiter, 0.0) + e.time_us
        return max(share, key=lambda k: share[k])

    def as_dict(self) -> dict[str, Any]:
        return {"machine": self.machine, "time_us": self.time_us, "bottleneck": self.bottleneck,
                "violations": self.violations, "utilization": self.utilization(),
                "sram_bytes_per_block": self.sram_bytes_per_block,
                "launches": [asdict(e) for e in self.launches]}


def estimate_launch(m: MachineModel, rec: LaunchTrace) -> LaunchEstimate:
    clock_hz = m.pe.clock_ghz * 1e9
    programs = max(1, rec.programs)
    waves = math.ceil(programs / m.num_pes)
    busy_pes = min(programs, m.num_pes)
    # Per-program averages: programs of one launch run the same code on different tiles.
    vec_instr = sum(math.ceil(n / m.pe.vector_width) * c for n, c in rec.vector_ops.items())
    sfu_cycles = sum(elems / m.sfu_rate(kind) for kind, elems in rec.sfu_elems.items())
    dot_flops = rec.dot_flops
    moved = rec.bytes_loaded + rec.bytes_stored
    bandwidth = min(m.memory.dram_bandwidth_gbs, busy_pes * m.memory.pe_port_bandwidth_gbs) * 1e9
    units_s = {
        "dram": moved / bandwidth,
        "vector": waves * (vec_instr / programs) / clock_hz,
        "sfu": waves * (sfu_cycles / programs) / clock_hz,
        "dot": waves * (dot_flops / programs / m.dot.flops_per_cycle) / clock_hz,
    }
    overhead_s = waves * m.pe.program_overhead_cycles / clock_hz
    busy_s = max(units_s.values()) + overhead_s
    launch_s = m.launch.launch_us * 1e-6
    top = max(units_s, key=lambda k: units_s[k])
    if launch_s >= busy_s:
        limiter = "launch_bound"
    elif overhead_s >= units_s[top]:
        limiter = "latency_bound"      # program instances too small to amortise their dispatch
    else:
        limiter = {"dram": "memory_bound", "vector": "compute_bound", "sfu": "sfu_bound",
                   "dot": "compute_bound"}[top]
    sram = m.rules.live_tiles * rec.max_block_elems * m.rules.compute_bytes
    pe_cycles = busy_s * clock_hz * m.num_pes
    return LaunchEstimate(
        name=rec.name, programs=rec.programs, time_us=(launch_s + busy_s) * 1e6, launch_us=launch_s * 1e6,
        dram_us=units_s["dram"] * 1e6, vector_us=units_s["vector"] * 1e6, sfu_us=units_s["sfu"] * 1e6,
        dot_us=units_s["dot"] * 1e6, overhead_us=overhead_s * 1e6, limiter=limiter,
        util_dram=min(1.0, moved / (busy_s * m.memory.dram_bandwidth_gbs * 1e9)),
        util_vector=min(1.0, vec_instr / pe_cycles),
        util_sfu=min(1.0, sfu_cycles / pe_cycles),
        util_dot=min(1.0, dot_flops / m.dot.flops_per_cycle / pe_cycles),
        util_pe=programs / (waves * m.num_pes),
        sram_bytes=sram, sram_ok=sram <= m.sram_bytes,
    )


def estimate(m: MachineModel, launches: list[LaunchTrace]) -> Estimate:
    out = Estimate(machine=m.name, launches=[estimate_launch(m, rec) for rec in launches])
    for e, rec in zip(out.launches, launches):
        if not e.sram_ok:
            out.violations.append(
                f"sram_overflow: kernel {e.name} holds a block of {rec.max_block_elems} elements per program "
                f"instance; {m.rules.live_tiles} live tiles x {m.rules.compute_bytes} B = {e.sram_bytes} B "
                f"exceeds the {m.sram_bytes} B of SRAM per PE (use a smaller BLOCK and loop over the row)")
    return out


# -- the baseline: the reference's aten ops, each its own launch --------------------------
# SFU work per output element, by aten op (the functions the op's vendor kernel evaluates).
_ATEN_SFU: dict[str, dict[str, int]] = {
    "exp": {"exp": 1}, "exp2": {"exp": 1}, "expm1": {"exp": 1}, "log": {"log": 1}, "log2": {"log": 1},
    "log1p": {"log": 1}, "sqrt": {"sqrt": 1}, "rsqrt": {"rsqrt": 1}, "erf": {"erf": 1}, "sin": {"sin": 1},
    "cos": {"cos": 1}, "sigmoid": {"exp": 1}, "tanh": {"exp": 1}, "silu": {"exp": 1},
    "softplus": {"exp": 1, "log": 1}, "gelu": {"erf": 1}, "_softmax": {"exp": 1},
    "_log_softmax": {"exp": 1, "log": 1}, "pow": {"exp": 1, "log": 1},
    "elu": {"exp": 1}, "logsumexp": {"exp": 1, "log": 1},
}
# Vector instructions per element beyond one (softmax: max, subtract, sum, divide).
_ATEN_VECTOR: dict[str, int] = {"_softmax": 4, "_log_softmax": 4, "gelu": 4, "sigmoid": 2, "tanh": 3,
                                "silu": 3,
                                "softplus": 2, "native_layer_norm": 6, "native_group_norm": 6, "var_mean": 3}
_DOT_OPS = {"mm", "bmm", "addmm", "baddbmm", "addbmm"}
# Ops that allocate or alias without moving data.
_FREE_OPS = {"empty", "empty_like", "empty_strided", "detach", "alias", "lift_fresh", "_unsafe_view", "view",
             "resize_", "set_"}


def _tensors(tree: Any) -> list[Any]:
    import torch
    from torch.utils._pytree import tree_leaves
    return [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]


def _dot_flops(name: str, args: tuple[Any, ...], out: Any) -> int:
    ts = _tensors(args)
    mats = [t for t in ts if t.dim() >= 2]
    if len(mats) < 2:
        return 0
    a = mats[-2]
    k = int(a.shape[-1])
    return 2 * int(out.numel()) * k


def aten_counter() -> Any:
    """A TorchDispatchMode that turns each aten op of the reference into a synthetic launch.

    Built lazily so importing this module does not import torch's dispatch machinery.
    """
    from torch.utils._python_dispatch import TorchDispatchMode

    class AtenCounter(TorchDispatchMode):
        """``with aten_counter() as c: model(*inputs)``; then estimate(machine, c.to_launches(machine))."""

        def __init__(self) -> None:
            super().__init__()
            self.ops: list[dict[str, Any]] = []

        def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                               kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = func.overloadpacket.__name__
            if name in _FREE_OPS or getattr(func, "is_view", False):
                return out
            ins, outs = _tensors((args, kwargs)), _tensors(out)
            elems_in = sum(int(t.numel()) for t in ins)
            elems_out = sum(int(t.numel()) for t in outs)
            if elems_out == 0:
                return out
            self.ops.append({
                "op": name,
                "bytes_read": sum(int(t.numel()) * t.element_size() for t in ins),
                "bytes_written": sum(int(t.numel()) * t.element_size() for t in outs),
                # reductions touch every input element; elementwise ops every output element
                "elems": max(elems_in if len(ins) == 1 else elems_out, elems_out),
                "dot_flops": _dot_flops(name, args, outs[0]) if name in _DOT_OPS else 0,
            })
            return out

        def to_launches(self, m: MachineModel) -> list[LaunchTrace]:
            tile = m.baseline.tile_elems
            launches = []
            for op in self.ops:
                # A vendor kernel spreads even a small op over every PE it can keep busy.
                programs = max(math.ceil(op["elems"] / tile),
                               min(m.num_pes, math.ceil(op["elems"] / m.pe.vector_width)))
                block = math.ceil(op["elems"] / programs)
                rec = LaunchTrace(name=f"aten::{op['op']}", grid=(programs, 1, 1), programs=programs,
                                  loads=programs, stores=programs, bytes_loaded=op["bytes_read"],
                                  bytes_stored=op["bytes_written"], dot_flops=op["dot_flops"],
                                  dot_ops=1 if op["dot_flops"] else 0, max_block_elems=block)
                rec.vector_ops[block] += programs * _ATEN_VECTOR.get(op["op"], 1)
                for kind, count in _ATEN_SFU.get(op["op"], {}).items():
                    rec.sfu_elems[kind] += count * op["elems"]
                launches.append(rec)
            return launches

    return AtenCounter()
