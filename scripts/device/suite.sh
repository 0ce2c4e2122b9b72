#!/usr/bin/env bash
# On a GPU machine: the whole suite in one call, each benchmark at its default (committed)
# configuration: layernorm, gemm, llm (candle and opbench on the model ladder at batch 1 and
# TinyLlama at batch 4/16), and kernel_bench's example with ncu. The
# transformers and torch peers run in llm.sh; layernorm's torch, torch.compile and Triton
# peers run right after its sweep (bench/peers/layernorm_peers.py, merged into its artifact).
# Exactly 8 files land in $OUT (the device tool's limit): layernorm.json, gemm.json,
# gemm_report.txt, llm.json, kernels.json, kernels_report.txt, env.json, suite.log.
#
# Build here (after `env_file=$(scripts/cuda-toolchain.sh) && source "$env_file"`):
#   cargo build --release --features cuda --bin layernorm_bench --bin gemm_bench \
#       --bin llm_bench --bin kernel_bench --bin opbench_env
#   d=.device-bin/suite; mkdir -p $d
#   for b in layernorm_bench gemm_bench llm_bench kernel_bench opbench_env; do
#       xz -T2 -6 -c $CARGO_TARGET_DIR/release/$b > $d/$b.xz; done
# Run there, from the repository root (carry .device-bin/suite):
#   OPBENCH_GIT_COMMIT=<sha> OPBENCH_GIT_DIRTY=0 bash scripts/device/suite.sh .device-bin/suite
set -uo pipefail
dir=${1:?usage: suite.sh DIR_WITH_XZ_BINARIES}
OUT=${OUT:?set OUT to an output folder}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bin=/tmp/opbench-suite
mkdir -p "$bin" "$OUT"
exec > >(tee "$OUT/suite.log") 2>&1
# Only the binaries that were carried: a call that runs some steps carries what they need.
for b in layernorm_bench gemm_bench llm_bench kernel_bench opbench_env; do
    [ -f "$dir/$b.xz" ] || continue
    xz -dc "$dir/$b.xz" > "$bin/$b" && chmod +x "$bin/$b" || { echo "cannot unpack $dir/$b.xz"; exit 1; }
done
step() { echo "=== $(date +%T) $*"; }
status=0
# SUITE_STEPS picks steps (default: all), e.g. SUITE_STEPS="gemm llm" to redo two.
steps=" ${SUITE_STEPS:-env layernorm gemm llm kernels} "
want() { [[ "$steps" == *" $1 "* ]]; }

if want env; then
step "environment"
"$bin/opbench_env" > "$OUT/env.json" || status=1
fi
if want layernorm; then
step "layernorm_bench (default sweep)"
timeout 240 "$bin/layernorm_bench" --out "$OUT/layernorm.json" 2>&1 | grep -vE '^\[' | tail -30 || status=1
if [ "${PEERS:-1}" != 0 ] && [ -s "$OUT/layernorm.json" ]; then
    step "layernorm peers: torch, torch.compile and Triton on the same points, merged (PEERS=0 skips)"
    timeout 240 python3 bench/peers/layernorm_peers.py --plan "$OUT/layernorm.json" --out /tmp/ln_peers.json 2>&1 | tail -15
    "$bin/layernorm_bench" --merge /tmp/ln_peers.json --out "$OUT/layernorm.json" 2>&1 | tail -60 || status=1
fi
fi
if want gemm; then
step "gemm_bench (default sweep)"
timeout 420 "$bin/gemm_bench" --b-layouts kn,nk --out "$OUT/gemm.json" --report "$OUT/gemm_report.txt" 2>&1 \
    | grep -vE '^\[[0-9]+/' | tail -8 || status=1
fi
if want llm; then
step "llm_bench: candle + opbench, ladder at batch 1 and tinyllama at batch 4,16 (the peers: llm.sh)"
source scripts/device/llm_parts.sh
llm_timed_parts "$bin/llm_bench" /tmp/llm.json /tmp/llm_parts 5 --device cuda || status=1
step "merge"
merge=()
for f in "${LLM_PARTS[@]}"; do [ -s "$f" ] && merge+=(--merge "$f"); done
"$bin/llm_bench" --out /tmp/llm.json "${merge[@]}" && cp /tmp/llm.json "$OUT/llm.json" || status=1
fi
if want kernels; then
step "kernel_bench example with ncu"
timeout 120 "$bin/kernel_bench" --manifest examples/matmul_kernels.toml --profile \
    --out "$OUT/kernels.json" --report "$OUT/kernels_report.txt" 2>&1 | tail -5 || status=1
fi
step "done (status $status)"
ls -la "$OUT"
exit $status
