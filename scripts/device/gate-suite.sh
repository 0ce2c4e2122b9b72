#!/usr/bin/env bash
# On a GPU machine: the GPU workflow's gate (scripts/ci/gpu-suite.sh, then scripts/ci/gate-suite.sh)
# in one call, with no Rust there. The base build is a carried wheel, installed into a fresh venv
# (scripts/device/wheel-lib.sh); its suite run is recorded as BASE_COMMIT into a scratch history.
# Then two heads, each gated against that run as gpu-bench.yml would:
#   A/A:  the same wheel as HEAD_COMMIT (same code: the gate must pass);
#   spin: when DIR/layernorm_bench_spin.xz is there, that layernorm_bench as SPIN_COMMIT (a real
#         code change: the gate must find the regression and exit 1).
# Usage, from the repo root there:
#   WHEEL=NAME.whl[.tar.xz] BASE_COMMIT=<sha> HEAD_COMMIT=<sha> [SPIN_COMMIT=<sha>] \
#       OUT=DIR bash scripts/device/gate-suite.sh DIR
# OPBENCH_SUITE_KINDS and OPBENCH_<KIND>_ARGS as for gpu-suite.sh (default: layernorm, the gate
# runs' four shapes). Everything lands in $OUT/gate-suite.log and $OUT/gate-suite.tar.xz.
set -uo pipefail
dir=${1:?usage: gate-suite.sh DIR}
OUT=${OUT:?set OUT to an output folder}
: "${WHEEL:?set WHEEL to the wheel of the base build}" "${BASE_COMMIT:?}" "${HEAD_COMMIT:?}"
export OPBENCH_SUITE_KINDS=${OPBENCH_SUITE_KINDS:-layernorm}
export OPBENCH_LAYERNORM_ARGS=${OPBENCH_LAYERNORM_ARGS:---shape 1x2048 --shape 4x512x1024 --shape 4096x4096 --shape 16384x8192}
w=/tmp/gate-suite
rm -rf "$w" && mkdir -p "$w/base-bin" "$w/spin-bin"
exec > >(tee "$OUT/gate-suite.log") 2>&1
source "$(dirname "$0")/wheel-lib.sh"
wheel_venv "$w/venv" "$WHEEL"
for t in layernorm_bench gemm_bench llm_bench history compare; do
    printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$w/venv/bin/opbench" "$t" > "$w/base-bin/$t"
    chmod +x "$w/base-bin/$t"
    cp "$w/base-bin/$t" "$w/spin-bin/$t"
done
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,driver_version --format=csv
step() { echo "=== $(date +%T) $*"; }
suite() { # BIN_DIR COMMIT OUT [--no-record]
    OPBENCH_SUITE_BIN_DIR=$1 OPBENCH_GIT_COMMIT=$2 OPBENCH_GIT_DIRTY=0 \
        bash scripts/ci/gpu-suite.sh --out "$3" --artifacts "$w/artifacts" "${@:4}"
}
gate() { # HEAD_BIN_DIR HEAD_COMMIT SUITE_DIR
    OPBENCH_SUITE_BIN_DIR=$1 OPBENCH_BASE_BIN_DIR="$w/base-bin" OPBENCH_GIT_COMMIT=$2 \
        bash scripts/ci/gate-suite.sh "$BASE_COMMIT" "$3" --artifacts "$w/artifacts"
}
step "base suite run, recorded as ${BASE_COMMIT:0:12}"
suite "$w/base-bin" "$BASE_COMMIT" "$w/base"
step "A/A: the same build as ${HEAD_COMMIT:0:12}, gated"
suite "$w/base-bin" "$HEAD_COMMIT" "$w/aa" --no-record
gate "$w/base-bin" "$HEAD_COMMIT" "$w/aa"
echo "gate-suite A/A: exit $?"
if [ -f "$dir/layernorm_bench_spin.xz" ]; then
    xz -dc "$dir/layernorm_bench_spin.xz" > "$w/spin-bin/layernorm_bench" && chmod +x "$w/spin-bin/layernorm_bench"
    step "spin: a slower layernorm_bench as ${SPIN_COMMIT:?set SPIN_COMMIT}, gated"
    suite "$w/spin-bin" "$SPIN_COMMIT" "$w/spin" --no-record
    gate "$w/spin-bin" "$SPIN_COMMIT" "$w/spin"
    echo "gate-suite spin: exit $?"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active --format=csv
step done
tar -C "$w" -cJf "$OUT/gate-suite.tar.xz" --exclude=venv --exclude='*-bin' --exclude=base-tree .
