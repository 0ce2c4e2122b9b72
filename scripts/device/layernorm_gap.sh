#!/usr/bin/env bash
# What separates our LayerNorm kernel from the best peer at the large shapes, in one call on one
# GPU: (1) scripts/device/layernorm_probe.cu built with nvcc and run (SET: hints, the default, or
# loop); (2) layernorm_bench at SHAPES with the peers of bench/peers/layernorm_peers.py timed on
# the same points in the same call, merged, and the per-point table of ours against each peer.
# The artifact lands in $OUT/layernorm-gap.json, the probe's lines in $OUT/probe.txt.
#
# Build here:  source /root/.cache/opbench/cuda-13.0/env.sh
#              cargo build --release --features cuda --bin layernorm_bench
#              mkdir -p .device-bin/NAME
#              xz -T2 -6 -c target/release/layernorm_bench > .device-bin/NAME/layernorm_bench.xz
# Run there (carry .device-bin/NAME):
#   OPBENCH_GIT_COMMIT=<sha> bash scripts/device/layernorm_gap.sh .device-bin/NAME
# Knobs: SHAPES (layernorm_bench --shape flags), PROBE_ARGS (ROUNDS SAMPLES LAUNCHES SET),
# PEERS=0 skips the peers, PROBE=0 skips the probe.
set -uo pipefail
bins=${1:?usage: layernorm_gap.sh DIR_WITH_layernorm_bench.xz}
out=${OUT:?set OUT to the folder for artifacts and logs}
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OPBENCH_GIT_DIRTY=${OPBENCH_GIT_DIRTY:-0}
shapes=${SHAPES:---shape 32768x4096 --shape 16384x8192}
bin=/tmp/layernorm_bench
xz -dc "$bins/layernorm_bench.xz" > "$bin" && chmod +x "$bin" || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv

if [ "${PROBE:-1}" != 0 ]; then
  echo "== 1. layernorm_probe ${PROBE_ARGS:-5 20 10 hints}"
  nvcc -O3 -arch=sm_90a -std=c++17 -I kernels scripts/device/layernorm_probe.cu -o /tmp/layernorm_probe -lcuda || exit 1
  # shellcheck disable=SC2086 # PROBE_ARGS holds several arguments
  timeout 200 /tmp/layernorm_probe ${PROBE_ARGS:-5 20 10 hints} | tee "$out/probe.txt"
  echo "probe rc=${PIPESTATUS[0]}"
fi

echo "== 2. layernorm_bench $shapes"
# shellcheck disable=SC2086 # $shapes holds several flags
timeout 150 "$bin" $shapes --out "$out/layernorm-gap.json" > "$out/gap-default.txt" 2> "$out/gap-progress.txt"
echo "rc=$?"
if [ "${PEERS:-1}" != 0 ] && [ -s "$out/layernorm-gap.json" ]; then
  echo "== 2b. peers on the same points: torch, torch.compile, triton"
  rm -f /tmp/ln_gap_peers.json
  PYTHONUNBUFFERED=1 timeout 200 python3 bench/peers/layernorm_peers.py --plan "$out/layernorm-gap.json" \
    --out /tmp/ln_gap_peers.json 2>&1 | tail -n 30
  echo "peers rc=${PIPESTATUS[0]}"
  if [ -s /tmp/ln_gap_peers.json ]; then
    "$bin" --merge /tmp/ln_gap_peers.json --out "$out/layernorm-gap.json"; echo "merge rc=$?"
  fi
fi
"$bin" --table "$out/layernorm-gap.json"
