#!/usr/bin/env bash
# The one test command (README, .ci/run): formatting, lints, every test, the browser test of the
# dashboard, workflow and manifest checks, and the CUDA build (through scripts/cuda-toolchain.sh
# when no CUDA toolkit is installed) so GPU code cannot rot unseen on GPU-less machines.
# Installs what it needs on a fresh machine. Set OPBENCH_SKIP_CUDA=1 to leave the CUDA build out.
set -euo pipefail
cd "$(dirname "$0")/.."
# The target folder lives outside the clone so repeated runs on one machine are incremental.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/opbench/target}"
step() { printf '\n== %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (CPU build)"
cargo clippy --all-targets --locked -- -D warnings

step "cargo test"
cargo test --locked 2>&1 | tee "${TMPDIR:-/tmp}/opbench-cargo-test.log"

for extra in scripts/browser-test.sh scripts/ci/lint-workflows.sh scripts/ci/validate-k8s.sh; do
    if [ -f "$extra" ]; then
        step "$extra"
        bash "$extra"
    fi
done

if [ "${OPBENCH_SKIP_CUDA:-0}" != "1" ]; then
    step "CUDA build (cargo build --release --features cuda)"
    if [ -z "${CUDA_ROOT:-}" ] && ! command -v nvcc >/dev/null 2>&1; then
        # shellcheck disable=SC1090
        source "$(scripts/cuda-toolchain.sh)"
    fi
    cargo build --release --features cuda --locked
    step "cargo clippy --features cuda"
    cargo clippy --release --features cuda --all-targets --locked -- -D warnings
fi

step "done"
# The plain closing line CI reads: the cargo test totals.
awk '/^test result:/ { n = split($0, a, /[ ;.]+/); for (i = 1; i < n; i++) { if (a[i+1] == "passed") p += a[i]; if (a[i+1] == "failed") f += a[i] } }
     END { printf "%d passed, %d failed\n", p, f }' "${TMPDIR:-/tmp}/opbench-cargo-test.log"
