#!/usr/bin/env bash
# scripts/device/trace.sh: the `llm_bench --trace` GPU run in one call: TinyLlama-1.1B (random
# f16 weights) at batch 1 with candle and with opbench (IMPLS), timed repeats, then per
# implementation one extra generation recorded with CUPTI (prefill + decode steps 64-66), all
# written into one llm_trace artifact, one compact kernel list and one Chrome trace (Perfetto).
#
# Usage (on the GPU machine, from the repo root): OUT=/some/dir bash scripts/device/trace.sh DIR
# where DIR holds llm_bench.xz (a `cargo build --release --features cuda --bin llm_bench`,
# xz-compressed). Outputs in $OUT: llm_trace.json, llm_decode.trace.json,
# llm_kernels.trace.json, llm_trace_point.json (the timed points), env.txt, log.txt.
set -uo pipefail
DIR=${1:?usage: trace.sh DIR_WITH_llm_bench.xz}
OUT=${OUT:?set OUT to an output folder}
REPEATS=${REPEATS:-3}
IMPLS=${IMPLS:-candle,opbench}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
BIN=/tmp/llm_bench_trace
xz -dc "$DIR/llm_bench.xz" > $BIN && chmod +x $BIN || exit 1
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks_throttle_reasons.active --format=csv
  ls -l /usr/local/cuda/lib64/libcupti.so* ; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
echo "=== $(date +%T) llm_bench --trace --impl $IMPLS"
timeout 400 $BIN --weights random --config tinyllama-1.1b --batch 1 --impl "$IMPLS" \
  --repeats "$REPEATS" --trace --trace-out "$OUT/llm_trace.json" \
  --trace-chrome "$OUT/llm_decode.trace.json" --trace-compact "$OUT/llm_kernels.trace.json" \
  --out "$OUT/llm_trace_point.json" --quiet 2>&1 | tee "$OUT/log.txt"
echo "=== $(date +%T) done: ${PIPESTATUS[0]}"
