#!/usr/bin/env bash
# The GPU workflow's gate: each kind of a suite run (SUITE_DIR/<kind>.json and the further
# processes in SUITE_DIR/processes/, written by scripts/ci/gpu-suite.sh) is compared with
# BASE_COMMIT's runs of it on this GPU in the history.
# Where compare marks a line of our code `confirm` (SLOWER, FAILED, UNCERTAIN, or SAME while its
# median moved the slow way by at least the minimum effect), the processes of each side did not
# settle it: the base commit is built in a worktree and scripts/ci/confirm.sh runs the base and
# head builds of that benchmark interleaved on this board (base, head, base, head, ...), N
# processes each, on the suite's own points, and its verdict is the gate's. Exits 1 when a confirmation finds a
# SLOWER or FAILED line of our code; 0 when none does, and when base has no run to compare with.
#
# Usage: scripts/ci/gate-suite.sh BASE_COMMIT SUITE_DIR [--artifacts DIR] [--processes N]
# Example (after gpu-suite.sh --out /tmp/suite):
#   scripts/ci/gate-suite.sh "$(git rev-parse HEAD~1)" /tmp/suite
# Environment:
#   OPBENCH_SUITE_BIN_DIR   head's benchmark binaries (default: target/release, as gpu-suite.sh)
#   OPBENCH_BASE_BIN_DIR    base's binaries, already built (default: built here, in a worktree
#                           of BASE_COMMIT, with --features cuda unless OPBENCH_DEVICE=cpu)
#   OPBENCH_SUITE_KINDS, OPBENCH_<KIND>_ARGS, OPBENCH_DEVICE   as for gpu-suite.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/ci/lib.sh
usage() { sed -n '/^# Usage:/,/^#   OPBENCH_SUITE_KINDS/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
base_commit=$1 suite=$2
shift 2
artifacts=artifacts
n=3
while [ $# -gt 0 ]; do
    case "$1" in
        --artifacts) artifacts="$2"; shift 2 ;;
        --processes) n="$2"; shift 2 ;;
        -h|--help) usage ;;
        *) echo "gate-suite: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "gate-suite: --processes must be a positive whole number, got '$n'" >&2; exit 2; }
[ -d "$suite" ] || { echo "gate-suite: $suite is not a folder (give gpu-suite.sh's --out)" >&2; exit 2; }
device="${OPBENCH_DEVICE:-cuda}"
head_bin="${OPBENCH_SUITE_BIN_DIR:-$PWD/target/release}"
compare="$head_bin/compare"
[ -x "$compare" ] || compare=$(command -v compare || true)
[ -x "$compare" ] || { echo "gate-suite: no compare in $head_bin or on PATH (build it: cargo build --release --bin compare)" >&2; exit 2; }
work="$suite/gate"
mkdir -p "$work"

# needs_confirmation KIND: compare BASE_COMMIT's runs with every process of the suite's (OUT/KIND.json
# and OUT/processes/KIND-<i>.json); true when compare marks a line of ours `confirm` (SLOWER,
# FAILED, UNCERTAIN, or SAME while it moved the slow way by at least the minimum effect).
# Writes $work/KIND.md.
needs_confirmation() {
    local kind=$1 json="$work/$1.json" head="$work/head-$1"
    rm -rf "$head" && mkdir -p "$head"
    cp "$suite/$kind.json" "$head/"
    for f in "$suite"/processes/"$kind"-*.json; do [ -f "$f" ] && cp "$f" "$head/"; done
    if ! "$compare" --base "$base_commit" --head "$head" --artifacts "$artifacts" \
        --format json --out "$json" --overwrite >/dev/null 2>"$work/$kind.err"; then
        echo "gate-suite: $kind: no run of ${base_commit:0:12} to compare with ($(head -n 1 "$work/$kind.err")); nothing to confirm" >&2
        return 1
    fi
    "$compare" --base "$base_commit" --head "$head" --artifacts "$artifacts" \
        --format markdown --out "$work/$kind.md" --overwrite >/dev/null 2>&1 || true
    python3 - "$json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
ours = [l for l in report["lines"] if not (l.get("control") or "").startswith("library")]
# compare marks the lines interleaving should settle (`confirm`): SLOWER, FAILED or UNCERTAIN,
# or SAME with a median that moved the slow way by at least the minimum effect.
open_lines = [l for l in ours if l.get("confirm")]
print(f"{len(open_lines)} of {len(ours)} lines of our code need confirmation (SLOWER, FAILED, UNCERTAIN, or SAME beyond the minimum effect)", file=sys.stderr)
sys.exit(0 if open_lines else 1)
PY
}

base_bin="${OPBENCH_BASE_BIN_DIR:-}"
build_base() {
    [ -n "$base_bin" ] && return 0
    git cat-file -e "$base_commit^{commit}" 2>/dev/null || git fetch --quiet --depth 1 origin "$base_commit"
    local tree="$work/base-tree"
    rm -rf "$tree"
    git worktree add --force --detach "$tree" "$base_commit" >&2
    local features=()
    [ "$device" = cuda ] && features=(--features cuda)
    (cd "$tree" && CARGO_TARGET_DIR="$work/base-target" cargo build --release --locked \
        "${features[@]}" --bin layernorm_bench --bin gemm_bench --bin llm_bench) >&2
    base_bin="$work/base-target/release"
}

read -r -a kinds <<<"${OPBENCH_SUITE_KINDS:-layernorm gemm llm}"
failed=()
for kind in "${kinds[@]}"; do
    [ -f "$suite/$kind.json" ] || { echo "gate-suite: $kind: no $suite/$kind.json (the suite did not finish it)" >&2; continue; }
    echo "== gate: $kind against ${base_commit:0:12}" >&2
    needs_confirmation "$kind" || continue
    build_base
    extra=$(suite_args "$kind")
    mapfile -t args <<<"$extra"
    [ -n "$extra" ] || args=()
    rc=0
    BASE_COMMIT="$base_commit" HEAD_COMMIT="${OPBENCH_GIT_COMMIT:-}" COMPARE="$compare" \
        scripts/ci/confirm.sh "$base_bin/${kind}_bench" "$head_bin/${kind}_bench" "$work/confirm-$kind" "$n" \
        -- --device "$device" "${args[@]}" || rc=$?
    case $rc in
        0) echo "gate-suite: $kind: confirmed, no regression of our code ($work/confirm-$kind/confirm.md)" >&2 ;;
        1) echo "gate-suite: $kind: the interleaved processes confirm a regression: $work/confirm-$kind/confirm.md" >&2
           failed+=("$kind") ;;
        *) echo "gate-suite: $kind: the confirmation could not run (confirm.sh exited $rc; see above)" >&2
           exit "$rc" ;;
    esac
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "gate-suite: regression confirmed in: ${failed[*]}" >&2
    exit 1
fi
echo "gate-suite: no confirmed regression" >&2
