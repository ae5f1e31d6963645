"""The profiler service: ``python -m services.profiler`` serves one platform's profile pool.

It consumes ``kv.work.profile.<platform>`` (ProfileRequest), runs the candidate (or the
reference, when no candidate key is given) in a sandboxed child process, writes the report
to ``reports/profile/<sha>.json`` and publishes a ProfileResult on ``kv.work.profiled``.

| platform runner | tools | what it reports |
|---|---|---|
| interpreter (cpu) | Triton interpreter + kevolve.exec.interp_trace | launches, grids, bytes read/written; no times |
| simulated (mtia-sim) | interpreter + kevolve.exec.mtia_sim | estimated time, per-unit utilization, limiting unit or rule |
| cuda | torch.profiler, then ncu on the candidate's kernels | kernel times; roofline reading with evidence |

Modules: ``config`` (settings), ``handlers`` (bus handler and the child orchestration),
``child`` (what runs in the sandbox), ``analysis`` (observations -> metrics, bottleneck,
summary), ``ncu`` (Nsight Compute command, CSV parser, roofline classifier).
"""
