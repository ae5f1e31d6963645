#!/usr/bin/env bash
# The benchmark suite searched through the whole system on one NVIDIA GPU:
#   bash bench/run_gpu_suite.sh [BUDGET] [JOB_WALL_S] [PARALLEL_JOBS] [--only SPEC ...]
# starts NATS and every service with `kevolve up --platform cuda` (a cpu screening pool and a
# cuda pool on this machine's GPU), runs `kevolve bench bench/suite --platform cuda` and writes
# bench/results/suite_cuda_<gpu>.{json,md,html}, crediting each kernel against the isolated
# torch.compile baselines of that GPU model when bench/results has them
# (bench/suite/measure_baselines.py). The report is rewritten as each spec ends.
# Defaults: budget 5 candidates per spec, 400 s of wall clock per job, 12 jobs at once per GPU:
# the settings bench/results/suite_cuda_h100 was measured with (its header lists them). Every
# GPU of the host is used (each its own evaluator workers, timing under its own lock);
# GPUS=0 (or a list, as `kevolve up --gpus` takes it) picks some. Each GPU brings a generator
# replica of its own, which makes the first drafts of its twelve jobs. BENCH_OUT=DIR writes
# the report elsewhere than bench/results.
# SUITE=bench/corpus/gpu_sample.txt (a folder or a .txt list) runs other specs, its report named
# after it (gpu_sample_cuda_<gpu>) unless STEM names it.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
GPUS=${GPUS:-all}
NGPU=$( [ "$GPUS" = all ] && nvidia-smi --query-gpu=index --format=csv,noheader | grep -c . || echo "$GPUS" | tr , '\n' | grep -c . )
[ "$NGPU" -ge 1 ] 2>/dev/null || NGPU=1
BUDGET=${1:-5}; WALL=${2:-400}; JOBS=${3:-$((12 * NGPU))}; shift 3 2>/dev/null || shift $#
OUT=${BENCH_OUT:-bench/results}; mkdir -p "$OUT"  # where the report is written
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
SLUG=$(printf '%s' "$GPU" | "$PY" -c "import re, sys; print(re.sub(r'[^a-z0-9]+', '_', sys.stdin.read().lower()).strip('_'))")
TAG=$(printf '%s' "$GPU" | "$PY" -c "import re, sys; m = re.search(r'\b([A-Z]\d{2,4}[A-Z]?)\b', sys.stdin.read()); print(m.group(1).lower() if m else 'gpu')")
SUITE=${SUITE:-bench/suite}
STEM=${STEM:-$( [ "$SUITE" = bench/suite ] && echo "suite_cuda_$TAG" || echo "$(basename "${SUITE%.txt}")_cuda_$TAG" )}
BASELINES=()
[ -f "bench/results/suite_baselines_$SLUG.json" ] && BASELINES=(--baselines "bench/results/suite_baselines_$SLUG.json")
"$PY" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'on', torch.cuda.get_device_name())"
echo "GPUs: $NGPU ($GPUS); $JOBS jobs at once"
# On each GPU: candidates are started, compiled and checked twelve at a time and timed one at a
# time under that GPU's lock (kevolve/exec/gpulock.py), held for the timing loop alone, which
# keeps the GPU busy with timing while the host prepares the next candidates.
export KEVOLVE_EVALUATOR_CONCURRENCY=${KEVOLVE_EVALUATOR_CONCURRENCY:-12}
export KEVOLVE_CONTROLLER_MAX_IN_FLIGHT=${KEVOLVE_CONTROLLER_MAX_IN_FLIGHT:-$((36 * NGPU))}
# Every job's spec is probed (imported and run once, sandboxed) when it is submitted, a few at
# a time per tenant: the bench is one tenant submitting all its jobs at once, so it gets four
# probes per GPU; the runner retries a submit turned away while they run.
export KEVOLVE_CONTROLLER_SPEC_PROBES_PER_TENANT=${KEVOLVE_CONTROLLER_SPEC_PROBES_PER_TENANT:-$((4 * NGPU))}
export KEVOLVE_CONTROLLER_SPEC_PROBE_WORKERS=${KEVOLVE_CONTROLLER_SPEC_PROBE_WORKERS:-$((4 * NGPU + 2))}
# A GPU profile holds the GPU lock for its whole run (ncu: tens of seconds per profile), which
# the timing of other candidates waits for: the suite is measured without profiles, and
# ncu looks at few launches when they are asked for.
export KEVOLVE_CONTROLLER_PROFILE=${KEVOLVE_CONTROLLER_PROFILE:-none}
export KEVOLVE_PROFILER_NCU_MAX_LAUNCHES=${KEVOLVE_PROFILER_NCU_MAX_LAUNCHES:-2}
# Confirming every would-be best with a second GPU evaluation doubles the GPU work of an
# improving job, and the timer's batch medians vary by ~0.2% within a run: the suite leaves
# it off. KEVOLVE_CONTROLLER_CONFIRM_BEST=true asks for it.
export KEVOLVE_CONTROLLER_CONFIRM_BEST=${KEVOLVE_CONTROLLER_CONFIRM_BEST:-false}
RUN=${RUN:-/tmp/kevolve-bench-$(date +%s)}  # a fresh database: nothing reused from an earlier run
"$PY" -m kevolve.client.main up --platform cuda --gpus "$GPUS" --generators "$NGPU" --port 0 --run-dir "$RUN" > "$RUN.up.log" 2>&1 &
UP=$!
for _ in $(seq 1 120); do [ -f "$RUN/state.json" ] && break; sleep 0.5; done
LIMIT=()
[ -n "${BENCH_LIMIT_S:-}" ] && LIMIT=(timeout "$BENCH_LIMIT_S")  # stop the runner after this long
${LIMIT[@]+"${LIMIT[@]}"} "$PY" -m kevolve.client.main bench "$SUITE" --platform cuda --budget "$BUDGET" \
  --wall-clock-s "$WALL" --parallel-jobs "$JOBS" --out "$OUT" --stem "$STEM" --run-dir "$RUN" \
  ${BASELINES[@]+"${BASELINES[@]}"} "$@" 2>&1 | tee "$RUN.bench.log"
kill -TERM $UP; wait $UP
# Every evaluation report (phases, timings, environment) and the services' logs, for the record.
tar czf "$RUN.logs.tgz" -C "$RUN" logs objects/reports 2>/dev/null
echo "report: $OUT/$STEM.md; evaluation reports and logs: $RUN.logs.tgz"
