#!/usr/bin/env bash
# Interleaved confirmation of a gate verdict on one board (as Chromium's Pinpoint does): runs
# the base and head builds of one benchmark as alternating processes (base, head, base, head,
# ...), N of each, then `compare`s all of head's processes against all of base's, so the verdict
# rests on each side's between-process spread (rule `processes`, docs/history.md) instead of one
# process a side. Exits 1 when a line of our code is SLOWER or FAILED (--fail-on-regression).
#
# Usage: scripts/ci/confirm.sh BASE_BIN HEAD_BIN OUT_DIR [N] -- BENCH_ARGS...
#   BASE_BIN, HEAD_BIN: the benchmark binary of each build (e.g. target/release/layernorm_bench
#   built at each commit); BENCH_ARGS: its arguments, without --out (given per process).
# Example:
#   scripts/ci/confirm.sh base/layernorm_bench head/layernorm_bench /tmp/confirm 3 -- \
#       --shape 4x512x1024 --shape 1x2048
# COMPARE (default: compare on PATH, else target/release/compare) and BASE_COMMIT/HEAD_COMMIT
# (recorded as OPBENCH_GIT_COMMIT of each side's runs) may be set.
set -euo pipefail
usage() { sed -n '/^# Usage:/,/^# COMPARE/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 4 ] || usage
base_bin=$1 head_bin=$2 out=$3
shift 3
n=3
if [ "$1" != "--" ]; then n=$1; shift; fi
[ "${1:-}" = "--" ] || usage
shift
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "confirm.sh: N must be a positive whole number, got '$n'" >&2; exit 2; }
for b in "$base_bin" "$head_bin"; do
    [ -x "$b" ] && [ -f "$b" ] || { echo "confirm.sh: $b is not an executable file (give each build's benchmark binary)" >&2; exit 2; }
done
compare=${COMPARE:-$(command -v compare || echo target/release/compare)}
[ -x "$compare" ] || { echo "confirm.sh: no compare binary at $compare (set COMPARE)" >&2; exit 2; }
mkdir -p "$out/base" "$out/head" "$out/none"
for i in $(seq 1 "$n"); do
    for side in base head; do
        bin=$base_bin commit=${BASE_COMMIT:-}
        [ "$side" = head ] && bin=$head_bin commit=${HEAD_COMMIT:-}
        echo "confirm.sh: process $i of $n, $side" >&2
        rm -f "$out/$side/run-$i.json"
        OPBENCH_GIT_COMMIT=${commit:-${OPBENCH_GIT_COMMIT:-}} "$bin" "$@" --out "$out/$side/run-$i.json" >&2
    done
done
# --artifacts names an empty folder: the verdict rests on these processes alone.
"$compare" --base "$out/base" --head "$out/head" --artifacts "$out/none" --fail-on-regression \
    --format markdown --out "$out/confirm.md"
