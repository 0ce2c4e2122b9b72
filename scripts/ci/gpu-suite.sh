#!/usr/bin/env bash
# Runs the benchmark suite (layernorm, gemm, llm) on this machine's GPU 0 in OPBENCH_SUITE_PROCESSES
# separate processes per kind (default 2: with one process a side the gate cannot tell a process's
# mode from a code change, docs/notes/gate.md), writes OUT/<kind>.json and
# OUT/processes/<kind>-<i>.json, and records each finished run into ARTIFACTS/history/ (one new
# file per run: nothing existing is modified, so machines running this in parallel never
# conflict).
# Called by gpu-bench.yml on self-hosted GPU runners and by deploy/k8s/gpu-suite-job.yaml;
# runs the same way by hand on any GPU machine:
#   scripts/ci/gpu-suite.sh [--out DIR] [--artifacts DIR] [--no-record]
#
# GitHub-hosted runners have no GPU: there this script stops at the GPU check.
# Environment:
#   OPBENCH_SUITE_BIN_DIR   prebuilt binaries (the container image); otherwise they are built
#                           here with --features cuda (the CUDA toolkit from /usr/local/cuda,
#                           else scripts/cuda-toolchain.sh)
#   OPBENCH_SUITE_KINDS     kinds to run (default "layernorm gemm llm")
#   OPBENCH_SUITE_PROCESSES processes per kind (default 2), the kinds interleaved
#   OPBENCH_LAYERNORM_ARGS, OPBENCH_GEMM_ARGS, OPBENCH_LLM_ARGS   extra arguments per benchmark
#                           (default for llm: --weights random --config tinyllama-1.1b, which
#                           needs no download)
#   OPBENCH_DEVICE          cuda (default) or cpu (the CPU paths, to try the script anywhere)
#   OPBENCH_GIT_COMMIT, OPBENCH_GIT_DIRTY   the commit the runs belong to (default: git)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/ci/lib.sh
out=target/gpu-suite
artifacts=artifacts
record=1
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out="$2"; shift 2 ;;
        --artifacts) artifacts="$2"; shift 2 ;;
        --no-record) record=0; shift ;;
        -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
        *) echo "gpu-suite: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
device="${OPBENCH_DEVICE:-cuda}"
mkdir -p "$out"

if [ -z "${OPBENCH_GIT_COMMIT:-}" ]; then
    OPBENCH_GIT_COMMIT=$(git rev-parse HEAD 2>/dev/null) || {
        echo "gpu-suite: no git checkout here: set OPBENCH_GIT_COMMIT to the commit being measured" >&2
        exit 1
    }
    if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
        OPBENCH_GIT_DIRTY=1
    fi
fi
export OPBENCH_GIT_COMMIT OPBENCH_GIT_DIRTY="${OPBENCH_GIT_DIRTY:-0}"

if [ "$device" = cuda ]; then
    if ! nvidia-smi -L >"$out/gpus.txt" 2>&1; then
        echo "gpu-suite: no GPU visible (nvidia-smi -L failed: $(head -n 1 "$out/gpus.txt")). This" \
            "runs on a self-hosted GPU runner or a GPU node; GitHub-hosted runners have none." >&2
        exit 1
    fi
    cat "$out/gpus.txt"
    export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
fi

if [ -n "${OPBENCH_SUITE_BIN_DIR:-}" ]; then
    bin="$OPBENCH_SUITE_BIN_DIR"
else
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
    features=()
    if [ "$device" = cuda ]; then
        features=(--features cuda)
        if [ -z "${CUDA_ROOT:-}" ] && ! command -v nvcc >/dev/null 2>&1; then
            if [ -x /usr/local/cuda/bin/nvcc ]; then
                export CUDA_ROOT=/usr/local/cuda PATH="/usr/local/cuda/bin:$PATH"
            else
                env_file=$(bash scripts/cuda-toolchain.sh)
                # shellcheck disable=SC1090
                source "$env_file"
            fi
        fi
    fi
    cargo build --release --locked "${features[@]}" \
        --bin layernorm_bench --bin gemm_bench --bin llm_bench --bin history --bin compare
    bin="$CARGO_TARGET_DIR/release"
fi

read -r -a kinds <<<"${OPBENCH_SUITE_KINDS:-layernorm gemm llm}"
processes="${OPBENCH_SUITE_PROCESSES:-2}"
[[ "$processes" =~ ^[1-9][0-9]*$ ]] || { echo "gpu-suite: OPBENCH_SUITE_PROCESSES must be a positive whole number, got '$processes'" >&2; exit 2; }
failed=()
# Every kind in each process round, so a slow drift of the machine lands on every kind alike.
for i in $(seq 1 "$processes"); do
    for kind in "${kinds[@]}"; do
        extra=$(suite_args "$kind") || exit 2
        mapfile -t extra_args <<<"$extra"
        [ -n "$extra" ] || extra_args=()
        file="$out/$kind.json" log="$out/$kind.log"
        if [ "$i" -gt 1 ]; then
            mkdir -p "$out/processes"
            file="$out/processes/$kind-$i.json" log="$out/processes/$kind-$i.log"
        fi
        echo "== $kind, process $i of $processes: ${kind}_bench --device $device ${extra_args[*]} --out $file"
        if "$bin/${kind}_bench" --device "$device" "${extra_args[@]}" --out "$file" >"$log" 2>&1; then
            tail -n 5 "$log"
            if [ "$record" = 1 ]; then
                "$bin/history" record "$file" --into "$artifacts"
            fi
        else
            echo "gpu-suite: $kind (process $i) failed; the last lines of $log:" >&2
            tail -n 20 "$log" >&2
            [[ " ${failed[*]} " == *" $kind "* ]] || failed+=("$kind")
        fi
    done
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "gpu-suite: failed: ${failed[*]} (the others were recorded)" >&2
    exit 1
fi
echo "gpu-suite: ${#kinds[@]} kinds x $processes processes done on commit ${OPBENCH_GIT_COMMIT:0:12}"
