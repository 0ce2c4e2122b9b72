#!/usr/bin/env bash
# Downloads the full artifacts of the newest completed gpu-bench.yml run (one `suite-<gpu>`
# upload per GPU kind) into DEST/suite-<gpu>/, so `summarize` and `dashboard` show the fleet's
# latest runs beside the committed artifacts. Used by publish.yml when ci.yml calls it; a
# gpu-bench run downloads its own uploads with actions/download-artifact instead. Full
# artifacts are CI uploads, not commits: only the compact history records are committed
# (docs/history.md). Needs the GitHub CLI and GH_TOKEN (actions: read). No completed run yet
# is not an error.
# Usage: scripts/ci/fetch-fleet.sh [DEST]   (default artifacts/fleet)
set -euo pipefail
cd "$(dirname "$0")/../.."
dest="${1:-artifacts/fleet}"
run_id=$(gh run list --workflow gpu-bench.yml --branch main --status completed --limit 1 \
    --json databaseId --jq '.[0].databaseId // empty')
if [ -z "$run_id" ]; then
    echo "fetch-fleet: no completed gpu-bench run yet; the site shows the committed artifacts only"
    exit 0
fi
mkdir -p "$dest"
if ! gh run download "$run_id" --pattern 'suite-*' --dir "$dest"; then
    echo "fetch-fleet: run $run_id has no suite-* uploads (expired or failed early)"
    exit 0
fi
for d in "$dest"/suite-*; do
    echo "fetch-fleet: ${d##*/}: $(find "$d" -name '*.json' | wc -l) artifacts from run $run_id"
done
