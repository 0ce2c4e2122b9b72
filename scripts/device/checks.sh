#!/usr/bin/env bash
# On a GPU machine: kernel_bench on inputs that must fail cleanly, the GPU half of the
# reliability tests. A kernel that faults mid-sweep (tests/fixtures/kernels/fault.toml: the
# faulted point is reported and the rest run in a fresh process), and, when given, a manifest
# of kernels whose check fails with non-finite values (the count goes to
# correctness.non_finite, never a huge rel_err). Artifacts land in $CHECKS_OUT.
#   bash scripts/device/checks.sh /tmp/opbench-suite/kernel_bench [EXTRA_MANIFEST ...]
set -uo pipefail
bench=${1:?usage: checks.sh PATH_TO_kernel_bench [MANIFEST ...]}
shift
out=${CHECKS_OUT:-/tmp/checks}
mkdir -p "$out"
n=0
for manifest in tests/fixtures/kernels/fault.toml "$@"; do
    n=$((n + 1))
    echo "=== $(date +%T) kernel_bench --manifest $manifest"
    timeout 180 "$bench" --manifest "$manifest" --out "$out/check$n.json" 2>&1 | tail -12
    echo "(exit ${PIPESTATUS[0]})"
done
