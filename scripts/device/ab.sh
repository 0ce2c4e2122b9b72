#!/usr/bin/env bash
# On a GPU machine: two builds of the suite's benchmarks (A and B, e.g. before and after a
# change to the harness) run back to back in one call on one GPU, so `compare` can tell a
# change of the code from a change of the machine. Order: A gemm, B gemm, A layernorm,
# B layernorm, A kernels, B kernels, A llm, B llm (KINDS="gemm llm" picks). At most 8 files land in $OUT:
# {a,b}-{gemm,layernorm,kernels,llm}.json; the log goes to stdout.
#
# Usage (repository root): OUT=... A_COMMIT=<sha> B_COMMIT=<sha> bash scripts/device/ab.sh DIR_A DIR_B
# where each DIR holds layernorm_bench.xz, gemm_bench.xz, kernel_bench.xz, llm_bench.xz
# (`cargo build --release --features cuda`, stripped, xz-compressed).
# Then, here: compare --base $OUT/a-<kind>.json --head $OUT/b-<kind>.json
set -uo pipefail
A=${1:?usage: ab.sh DIR_A DIR_B}
B=${2:?usage: ab.sh DIR_A DIR_B}
OUT=${OUT:?set OUT to an output folder}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT" /tmp/ab/a /tmp/ab/b
for side in a b; do
    dir=$A; [ $side = b ] && dir=$B
    for x in layernorm_bench gemm_bench kernel_bench llm_bench; do
        [ -f "$dir/$x.xz" ] || continue
        xz -dc "$dir/$x.xz" > /tmp/ab/$side/$x && chmod +x /tmp/ab/$side/$x || { echo "cannot unpack $dir/$x.xz"; exit 1; }
    done
done
step() { echo "=== $(date +%T) $*"; }
status=0
for kind in ${KINDS:-gemm layernorm kernels llm}; do
    for side in a b; do
        bin=/tmp/ab/$side
        commit=${A_COMMIT:-unknown}; [ $side = b ] && commit=${B_COMMIT:-unknown}
        export OPBENCH_GIT_COMMIT=$commit OPBENCH_GIT_DIRTY=0
        out="$OUT/$side-$kind.json"
        step "$side: $kind"
        case $kind in
        gemm) timeout 240 $bin/gemm_bench --out "$out" --report /tmp/ab/$side-gemm.txt > /dev/null 2>&1 || status=1 ;;
        layernorm) timeout 240 $bin/layernorm_bench --out "$out" > /dev/null 2>&1 || status=1 ;;
        kernels) timeout 120 $bin/kernel_bench --manifest examples/matmul_kernels.toml --out "$out" \
            --report /tmp/ab/$side-kernels.txt > /dev/null 2>&1 || status=1 ;;
        llm) timeout 200 $bin/llm_bench --weights random --config tinyllama-1.1b --batch 1,4,16 \
            --impl candle,opbench --repeats 5 --device cuda --out "$out" --quiet > /dev/null 2>&1 || status=1 ;;
        esac
    done
done
step "done (status $status)"
ls -la "$OUT"
exit $status
