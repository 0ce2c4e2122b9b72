#!/usr/bin/env bash
# Runs gemm_bench on the GPU machine: a quick smoke sweep of every kernel at small and odd
# shapes first (so a kernel that faults is found and left out instead of ending the run), then
# the full default sweep with B stored both ways (--b-layouts kn,nk). Expects the xz-compressed release binary beside this script
# (gemm_bench.xz, built with --features cuda) and writes everything under $OUT.
#   usage: OPBENCH_GIT_COMMIT=<sha> OPBENCH_GIT_DIRTY=0 bash gemm.sh [extra gemm_bench flags]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$PWD/gemm-out}"
mkdir -p "$out"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
bin=/tmp/gemm_bench
xz -dc "$here/gemm_bench.xz" >"$bin" && chmod +x "$bin" || { echo "cannot unpack $here/gemm_bench.xz"; exit 1; }
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,power.limit --format=csv | tee "$out/gpu.txt"

ours="naive coalesced smem_tiled blocktile_2d vectorized_2d warptile_bk8 warptile_bk16 mma_smem mma_pipelined_128x128 mma_pipelined_128x256 wgmma_128x256 tma_128x256 tma_ws_128x256 tma_ws_persistent_128x256 tma_ws_cluster2_128x256 tma_ws_splitk"
smoke=(--square 256 --m 130 --n 256 --k 128 --dtypes f32,f16,bf16 --model tinyllama-1.1b
       --tokens 1,33 --layer-ops k_v_proj,down_proj --b-layouts kn,nk --ceiling-size 0 --budget-ms 20)
skip=""
if ! "$bin" "${smoke[@]}" --out /tmp/smoke.json --report "$out/smoke_report.txt" >"$out/smoke.log" 2>&1; then
    echo "smoke sweep failed; running each kernel alone to find the one that faults"
    tail -5 "$out/smoke.log"
    for imp in $ours; do
        if ! timeout 120 "$bin" "${smoke[@]}" --impls "$imp" --out /tmp/smoke1.json \
            --report /tmp/smoke1.txt >>"$out/smoke.log" 2>&1; then
            echo "  $imp faults: left out of the full sweep"
            skip="${skip:+$skip,}$imp"
        fi
    done
fi
grep -E "FAIL|PASS|FAILED" "$out/smoke_report.txt" | head -20

extra=()
[ -n "$skip" ] && extra=(--skip-impls "$skip")
"$bin" "${extra[@]}" --b-layouts kn,nk "$@" --out "$out/gemm.json" --report "$out/gemm_report.txt" 2>&1 | tee "$out/gemm.log" | grep -vE "^\[[0-9]+/" 
rc=${PIPESTATUS[0]}
[ -f "$out/gemm.json.partial" ] && echo "partial artifact kept: $out/gemm.json.partial"
echo "=== summary (rc=$rc) ==="
head -8 "$out/gemm_report.txt" 2>/dev/null
exit "$rc"
