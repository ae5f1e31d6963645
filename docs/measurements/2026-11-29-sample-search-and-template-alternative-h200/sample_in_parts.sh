#!/usr/bin/env bash
# usage: sample.sh LIMIT_S PART...   (runs the union of the parts, resuming .device/sample/*.json)
LIMIT=$1; shift
source tools/install_wheels_offline.sh > /dev/null 2>&1
mkdir -p "$OUT/sample"
cp .device/sample/gpu_sample_cuda_h200.json "$OUT/sample/" 2>/dev/null && echo "resuming"
ONLY=()
for p in "$@"; do while read -r s; do ONLY+=(--only "$s"); done < ".device/part$p.txt"; done
echo "specs: $(( ${#ONLY[@]} / 2 ))"
export RUN=/tmp/kevolve-sample-$(date +%s)
BENCH_OUT=$OUT/sample STEM=gpu_sample_cuda_h200 BENCH_LIMIT_S=$LIMIT SUITE=bench/corpus/gpu_sample.txt \
  bash bench/run_gpu_suite.sh 3 300 12 --resume "${ONLY[@]}" 2>&1 | grep -vE "^\s*$" | tail -n 150
rm -f "$OUT/sample/"*.html
cp "$RUN.logs.tgz" "$OUT/sample/logs_$(date +%s).tgz" 2>/dev/null
ls -la "$OUT/sample"
