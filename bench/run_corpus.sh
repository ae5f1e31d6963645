#!/usr/bin/env bash
# The spec corpus through the whole system on one platform, as a user runs it:
#   bash bench/run_corpus.sh [SUITE]                  (default: bench/corpus, every level)
# starts NATS and every service with `kevolve up --platform $PLATFORM`, runs `kevolve bench`
# over the specs (files as written, no cpu_shapes: the system derives screening sizes) and
# writes $OUT/$STEM.{json,md,html}, rewritten as each spec ends. A stopped run goes on where
# it stopped when started again (`kevolve bench --resume`): specs that ended are kept.
# Settings (environment): PLATFORM=cpu BUDGET=2 (candidates per spec) JOBS=2 (jobs at once;
# one per core suits the cpu pool) JOB_TIMEOUT_S=900 BENCH_OUT=bench/results STEM=corpus_$PLATFORM.
set -uo pipefail
cd "$(dirname "$0")/.."
SUITE=${1:-bench/corpus}
PLATFORM=${PLATFORM:-cpu}; BUDGET=${BUDGET:-2}; JOBS=${JOBS:-2}; JOB_TIMEOUT_S=${JOB_TIMEOUT_S:-900}
OUT=${BENCH_OUT:-bench/results}; STEM=${STEM:-corpus_$PLATFORM}; mkdir -p "$OUT"
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
# Every service keeps up with JOBS jobs: candidates evaluated, specs traced and probed side by side.
export KEVOLVE_EVALUATOR_CONCURRENCY=${KEVOLVE_EVALUATOR_CONCURRENCY:-$JOBS}
export KEVOLVE_GENERATOR_CONCURRENCY=${KEVOLVE_GENERATOR_CONCURRENCY:-$JOBS}
export KEVOLVE_CONTROLLER_SPEC_PROBE_WORKERS=${KEVOLVE_CONTROLLER_SPEC_PROBE_WORKERS:-$(( JOBS > 2 ? JOBS + 1 : 4 ))}
export KEVOLVE_CONTROLLER_SPEC_PROBES_PER_TENANT=${KEVOLVE_CONTROLLER_SPEC_PROBES_PER_TENANT:-$(( JOBS > 2 ? JOBS : 2 ))}
export KEVOLVE_CONTROLLER_MAX_IN_FLIGHT=${KEVOLVE_CONTROLLER_MAX_IN_FLIGHT:-$(( JOBS * 2 > 16 ? JOBS * 2 : 16 ))}
export KEVOLVE_CONTROLLER_PROFILE=${KEVOLVE_CONTROLLER_PROFILE:-none}
RUN=${RUN:-/tmp/kevolve-corpus-$(date +%s)}
"$PY" -m kevolve.client.main up --platform "$PLATFORM" --port 0 --run-dir "$RUN" > "$RUN.up.log" 2>&1 &
UP=$!
for _ in $(seq 1 240); do [ -f "$RUN/state.json" ] && break; sleep 0.5; done
LIMIT=()
[ -n "${BENCH_LIMIT_S:-}" ] && LIMIT=(timeout "$BENCH_LIMIT_S")  # stop the runner after this long
${LIMIT[@]+"${LIMIT[@]}"} "$PY" -m kevolve.client.main bench "$SUITE" --platform "$PLATFORM" --budget "$BUDGET" \
  --parallel-jobs "$JOBS" --job-timeout-s "$JOB_TIMEOUT_S" --out "$OUT" --stem "$STEM" --run-dir "$RUN" --resume \
  "${@:2}" 2>&1 | tee "$RUN.bench.log"
kill -TERM $UP; wait $UP
echo "report: $OUT/$STEM.md; service logs: $RUN/logs"
