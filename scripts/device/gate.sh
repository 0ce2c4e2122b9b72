#!/usr/bin/env bash
# On a GPU machine: the runs that calibrate the regression gate (docs/history.md, "Between
# processes"). Same-code (A/A) runs: PROCS separate processes of each kind (layernorm, gemm,
# kernels, llm) on this board, the kinds interleaved so a slow drift of the board lands on
# every kind. Then, when DIR/head/ holds a second build, an interleaved (ABAB) confirmation:
# CONFIRM processes each of the base and head LayerNorm builds, alternating.
# Everything lands in $OUT/gate.tar.xz (runs/aa/<kind>-<i>.json, runs/confirm/{base,head}-<i>.json)
# and $OUT/gate.log.
#
# Build here: cargo build --release --features cuda --bin layernorm_bench --bin gemm_bench
#   --bin llm_bench --bin kernel_bench --bin opbench_env, then xz each into DIR/ (and the head
#   build's layernorm_bench into DIR/head/). Or, with OPBENCH=VENV/bin/opbench, the commands
#   of a wheel installed there; or with WHEEL=NAME.whl[.tar.xz] (scripts/device/wheel-lib.sh),
#   that wheel installed into a fresh venv first: one carried wheel instead of five binaries.
# Run there: OPBENCH_GIT_COMMIT=<sha> HEAD_COMMIT=<sha> bash scripts/device/gate.sh DIR
set -uo pipefail
dir=${1:?usage: gate.sh DIR_WITH_XZ_BINARIES}
OUT=${OUT:?set OUT to an output folder}
PROCS=${PROCS:-4}
CONFIRM=${CONFIRM:-3}
KINDS=${KINDS:-"layernorm gemm kernels llm"}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OPBENCH_GIT_DIRTY=0
base_commit=${OPBENCH_GIT_COMMIT:?set OPBENCH_GIT_COMMIT to the base build commit}
bin=/tmp/gate-bin
w=/tmp/gate/runs
rm -rf /tmp/gate && mkdir -p "$bin/base" "$bin/head" "$w/aa" "$w/confirm"
exec > >(tee "$OUT/gate.log") 2>&1
for b in layernorm_bench gemm_bench llm_bench kernel_bench opbench_env; do
    [ -f "$dir/$b.xz" ] && { xz -dc "$dir/$b.xz" > "$bin/base/$b" && chmod +x "$bin/base/$b"; }
    [ -f "$dir/head/$b.xz" ] && { xz -dc "$dir/head/$b.xz" > "$bin/head/$b" && chmod +x "$bin/head/$b"; }
done
if [ -n "${WHEEL:-}" ]; then
    source "$(dirname "$0")/wheel-lib.sh"
    wheel_venv /tmp/gate-venv "$WHEEL"
    OPBENCH=/tmp/gate-venv/bin/opbench
fi
# OPBENCH: the `opbench` launcher of an installed wheel, standing in for every base tool.
if [ -n "${OPBENCH:-}" ]; then
    for t in layernorm_bench gemm_bench llm_bench kernel_bench opbench_env; do
        printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$OPBENCH" "$t" > "$bin/base/$t"
        chmod +x "$bin/base/$t"
    done
fi
step() { echo "=== $(date +%T) $*"; }
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,driver_version --format=csv
[ -x "$bin/base/opbench_env" ] && "$bin/base/opbench_env" > "$w/env.json" 2>/dev/null

# The LayerNorm points of the gate runs: the decode row (launch-bound), the [4,512,1024] case,
# a mid and a large tensor; every dtype, cold and warm (the sweep's default modes).
ln_args=(--shape 1x2048 --shape 4x512x1024 --shape 4096x4096 --shape 16384x8192)
run_kind() { # KIND BINDIR OUTFILE
    case $1 in
    layernorm) timeout 120 "$2/layernorm_bench" "${ln_args[@]}" --out "$3" --overwrite 2>&1 | grep -vE '^\[' | tail -2 ;;
    gemm) timeout 150 "$2/gemm_bench" --square 1024:4096:x2 --dtypes bf16 --model-dtypes bf16 \
        --out "$3" --overwrite --report /tmp/gate/gemm_report.txt 2>&1 | grep -vE '^\[[0-9]+/' | tail -2 ;;
    kernels) timeout 90 "$2/kernel_bench" --manifest examples/matmul_kernels.toml --out "$3" --overwrite \
        --report /tmp/gate/kernels_report.txt 2>&1 | tail -2 ;;
    llm) timeout 150 "$2/llm_bench" --weights random --config tinyllama-1.1b,llama-134m --batch 1 \
        --impl candle,opbench --repeats 5 --out "$3" --quiet 2>&1 | tail -2 ;;
    esac
}
for i in $(seq 1 "$PROCS"); do
    for k in $KINDS; do
        step "A/A process $i of $PROCS: $k"
        run_kind "$k" "$bin/base" "$w/aa/$k-$i.json"
    done
done
if [ -x "$bin/head/layernorm_bench" ]; then
    for i in $(seq 1 "$CONFIRM"); do
        step "confirmation $i of $CONFIRM: base"
        run_kind layernorm "$bin/base" "$w/confirm/base-$i.json"
        step "confirmation $i of $CONFIRM: head"
        OPBENCH_GIT_COMMIT=${HEAD_COMMIT:?set HEAD_COMMIT} run_kind layernorm "$bin/head" "$w/confirm/head-$i.json"
    done
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active --format=csv
step "done"
tar -C /tmp/gate -cJf "$OUT/gate.tar.xz" runs
ls -la "$OUT"
