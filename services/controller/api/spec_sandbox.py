"""python -m services.controller.api.spec_sandbox <spec file> <sizes JSON> <timeout_s>

Runs the spec probe child under ``kevolve.exec.sandbox`` and prints one ``ProbeReport`` line.
It exists as its own process because the sandbox forks with a ``preexec_fn`` (to set rlimits),
which is unsafe in the controller itself: gRPC's threads and fork handlers make such a child
crash. The controller starts this helper with a plain spawn, and the helper has no gRPC.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kevolve.exec import sandbox

from .probe_messages import RESULT_FILE, ProbeChildResult, ProbeReport

CHILD = "services.controller.api.spec_child"


def main() -> None:
    spec_file, sizes, timeout_s = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    # Deriving screening sizes may take half the probe's time; the rest is for the probe.
    derive_s = timeout_s / 2
    try:
        result = sandbox.run(
            [sys.executable, "-m", CHILD, spec_file.name, sizes, str(derive_s)],
            scratch=spec_file.parent,
            limits=sandbox.Limits(timeout_s=timeout_s, memory_mb=4096, max_procs=64),
            env={"PYTHONPATH": sandbox.child_pythonpath(), "TRITON_INTERPRET": "1", **sandbox.ONE_THREAD},
        )
    except sandbox.IsolationUnavailable as exc:
        print(ProbeReport(unavailable=str(exc)).model_dump_json())
        return
    print(ProbeReport(killed_for=result.killed_for, returncode=result.returncode, duration_s=result.duration_s,
                      log_tail=result.log_tail[-2_000:], mode=result.mode,
                      child=ProbeChildResult.read(spec_file.parent / RESULT_FILE)).model_dump_json())


if __name__ == "__main__":
    main()
