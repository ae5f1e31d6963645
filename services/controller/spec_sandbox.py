"""python -m services.controller.spec_sandbox <spec file> <sizes JSON> <timeout_s>

Runs the spec probe child under ``kevolve.sandbox`` and prints its JSON line. It exists as
its own process because the sandbox forks with a ``preexec_fn`` (to set rlimits), which is
unsafe in the controller itself: gRPC's threads and fork handlers make such a child crash.
The controller starts this helper with a plain spawn, and the helper has no gRPC.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kevolve import sandbox

CHILD = Path(__file__).resolve().parent / "spec_child.py"


def main() -> None:
    spec_file, sizes, timeout_s = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    result = sandbox.run(
        [sys.executable, str(CHILD), str(spec_file), sizes],
        scratch=spec_file.parent,
        limits=sandbox.Limits(timeout_s=timeout_s, memory_mb=4096, max_procs=64),
        env={"PYTHONPATH": sandbox.child_pythonpath(), "TRITON_INTERPRET": "1", "OMP_NUM_THREADS": "1"},
    )
    print(json.dumps({"killed_for": result.killed_for, "returncode": result.returncode,
                      "duration_s": result.duration_s, "stdout": result.stdout[-20_000:],
                      "log_tail": result.log_tail[-2_000:], "mode": result.mode}))


if __name__ == "__main__":
    main()
