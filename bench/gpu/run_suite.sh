#!/usr/bin/env bash
# The suite through the real system on a GPU: NATS + all services (cpu screening pool and a
# cuda pool) started by `kevolve up`, then `kevolve bench --platform cuda`. Raw results and
# the report land in $OUT (the device tool brings them back) and bench/results/.
# Usage: bash bench/gpu/run_suite.sh BUDGET [--only SPEC ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
source bench/gpu/env.sh
BUDGET=${1:-4}; shift || true
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$OUT/gpu.txt"
RUN=/tmp/kevolve-run
python3 -m kevolve.cli.main up --platform cuda --port 0 --run-dir "$RUN" > "$OUT/up.log" 2>&1 &
UP=$!
for _ in $(seq 1 120); do [ -f "$RUN/state.json" ] && break; sleep 0.5; done
python3 -m kevolve.cli.main bench bench/suite --platform cuda --budget "$BUDGET" --parallel-jobs 3 \
  --out "$OUT" --run-dir "$RUN" "$@" 2>&1 | tee "$OUT/bench.log"
kill -TERM $UP; wait $UP
tar czf "$OUT/logs.tgz" -C "$RUN" logs 2>/dev/null
