#!/usr/bin/env bash
# On a GPU machine: the whole suite, each benchmark at its default (committed) configuration:
# layernorm, gemm, llm (scripts/device/llm.sh whole: candle and opbench on the model ladder at
# batch 1 and TinyLlama at batch 4/16, the transformers and torch peers, parity), and
# kernel_bench's example with ncu. layernorm's torch, torch.compile and Triton peers run right
# after its sweep (bench/peers/layernorm_peers.py, merged into its artifact). The llm step
# takes most of one 10-minute call: SUITE_STEPS="env layernorm gemm kernels" in one call,
# SUITE_STEPS=llm in the next.
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
# llm.sh whole: candle and opbench, the transformers and torch peers on the same weights, ncu,
# the merge and the parity checks, so that `compare` against the committed llm artifact has
# every point (a run without the peers leaves them REMOVED and fails the gate). It writes its
# own 7 files into a folder of its own; llm.json comes here. It takes most of a 10-minute call:
# run it as SUITE_STEPS=llm, the other steps in another call.
step "llm: scripts/device/llm.sh (candle, opbench, peers, parity)"
LLM_OUT=${LLM_OUT:-/tmp/suite-llm}
rm -rf "$LLM_OUT"
OUT="$LLM_OUT" bash scripts/device/llm.sh "$dir" 2>&1 | grep -vE '^\[' | tail -40 || status=1
if [ -s "$LLM_OUT/llm.json" ]; then cp "$LLM_OUT/llm.json" "$OUT/llm.json"; else status=1; fi
fi
if want kernels; then
step "kernel_bench example with ncu"
timeout 120 "$bin/kernel_bench" --manifest examples/matmul_kernels.toml --profile \
    --out "$OUT/kernels.json" --report "$OUT/kernels_report.txt" 2>&1 | tail -5 || status=1
fi
step "done (status $status)"
ls -la "$OUT"
exit $status
