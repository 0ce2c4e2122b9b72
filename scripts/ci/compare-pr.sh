#!/usr/bin/env bash
# The pull-request comment (pr-compare.yml): `compare` of the working tree's artifacts (head)
# against those of BASE_REF (base), as Markdown headed by the marker line the workflow uses to
# find and update its previous comment. Changed points are in the table; unchanged (SAME)
# ones are counted, and listed in a folded block when the comment stays under GitHub's size
# limit. Runs the same way locally:
#   scripts/ci/compare-pr.sh main /tmp/compare.md
set -euo pipefail
base_ref="${1:?usage: scripts/ci/compare-pr.sh BASE_REF [OUT.md]}"
out="${2:-compare.md}"
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
marker='<!-- opbench-compare -->'
base_sha=$(git rev-parse --short=12 "$base_ref")
head_sha=$(git rev-parse --short=12 HEAD)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base"
if git cat-file -e "$base_ref:artifacts" 2>/dev/null; then
    git archive "$base_ref" artifacts | tar -x -C "$tmp/base"
fi
cargo build --release --locked --bin compare
compare="$CARGO_TARGET_DIR/release/compare"
footer="<sub>opbench compare: artifacts committed at \`$base_sha\` (base) and \`$head_sha\` (head). \
GitHub-hosted runners have no GPU: these are runs measured on GPU machines and committed, not measured by this job.</sub>"
{
    echo "$marker"
    if [ -d "$tmp/base/artifacts" ] && [ -d artifacts ] && diff -rq "$tmp/base/artifacts" artifacts >/dev/null; then
        # compare refuses the same runs on both sides: say so without a table.
        echo "### opbench compare: no new runs (the artifacts are those of $base_ref)"
    elif [ -d "$tmp/base/artifacts" ] && [ -d artifacts ]; then
        names=(--base-name "$base_ref @ $base_sha" --head-name "HEAD @ $head_sha")
        if "$compare" --base "$tmp/base/artifacts" --head artifacts --artifacts artifacts \
            "${names[@]}" --format markdown --only-changes --skip-invalid >"$tmp/changes.md" 2>"$tmp/err"; then
            cat "$tmp/changes.md"
            if "$compare" --base "$tmp/base/artifacts" --head artifacts --artifacts artifacts \
                "${names[@]}" --format markdown --skip-invalid >"$tmp/full.md" 2>/dev/null &&
                [ "$(wc -c <"$tmp/full.md")" -lt 55000 ]; then
                printf '\n<details><summary>every point</summary>\n\n'
                cat "$tmp/full.md"
                printf '\n</details>\n'
            fi
        else
            echo "### opbench compare could not run"
            echo
            echo '```'
            cat "$tmp/err"
            echo '```'
        fi
    else
        echo "### opbench compare: no artifacts on $( [ -d artifacts ] && echo base || echo head )"
    fi
    echo
    echo "$footer"
} >"$out"
echo "compare-pr: wrote $out ($(wc -c <"$out") bytes)"
