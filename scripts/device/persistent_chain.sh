#!/usr/bin/env bash
# scripts/device/persistent_chain.sh: builds scripts/device/persistent_chain.cu with the GPU
# machine's nvcc and runs it PROCS times (default 2, one process each), with the board's name,
# driver, clocks and throttle reasons before and after; each process is stopped after LIMIT s
# (default 120; a process takes about 25 s on an H200). What it measures and prints: the .cu
# file's header. Results: $OUT/env.txt and $OUT/run<i>.txt.
# Usage (GPU machine, repo root): OUT=DIR COMMIT=<sha> bash scripts/device/persistent_chain.sh
#   [persistent_chain arguments, e.g. --stall-ns 0,1000,2000,4000]
set -uo pipefail
OUT=${OUT:?set OUT to an output folder}
PROCS=${PROCS:-2}
BIN=/tmp/persistent_chain
mkdir -p "$OUT"
query=name,pci.bus_id,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw,clocks_throttle_reasons.active
{ echo "commit ${COMMIT:-unknown}"; nvidia-smi --query-gpu=$query --format=csv; } > "$OUT/env.txt"
nvcc -O3 -arch=sm_90a -Xcompiler -fopenmp scripts/device/persistent_chain.cu -o $BIN || exit 1
for i in $(seq 1 "$PROCS"); do
  echo "=== process $i"
  timeout "${LIMIT:-120}" $BIN "$@" | tee "$OUT/run$i.txt"
  rc=${PIPESTATUS[0]}
  echo "rc $rc$([ "$rc" = 124 ] && echo " (timed out after ${LIMIT:-120} s)")" | tee -a "$OUT/run$i.txt"
done
nvidia-smi --query-gpu=$query --format=csv,noheader >> "$OUT/env.txt"
cat "$OUT/env.txt"
