#!/usr/bin/env bash
# Renders what GitHub Pages serves: the dashboard of artifacts/ (its history included) into
# SITE, then `summarize` writes summary.json (with its `regressions` section) and summary.csv
# beside the pages. Plotly.js comes from its CDN (`--plotly cdn`, pinned with an integrity
# hash), so the deployment keeps one cached copy across sites. In GitHub Actions the history
# page links commits to the repository (GITHUB_SERVER_URL/GITHUB_REPOSITORY). Needs no GPU.
# OPBENCH_BIN_DIR: a folder that already holds dashboard and summarize (scripts/test.sh passes its
# test build), instead of building them here. Runs the same way locally:
#   scripts/ci/publish.sh site && xdg-open site/index.html
set -euo pipefail
cd "$(dirname "$0")/../.."
site="${1:-site}"
artifacts="${OPBENCH_ARTIFACTS:-artifacts}"
if [ -n "${OPBENCH_BIN_DIR:-}" ]; then
    bin="$OPBENCH_BIN_DIR"
else
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
    cargo build --release --locked --bin dashboard --bin summarize
    bin="$CARGO_TARGET_DIR/release"
fi
"$bin/dashboard" --artifacts "$artifacts" --out "$site" --plotly cdn ${GITHUB_REPOSITORY:+--repo-url "${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_REPOSITORY"}
"$bin/summarize" --artifacts "$artifacts" --out-dir "$site"
# Our atomic writes create 0600 files; the Pages artifact must be world-readable.
chmod -R a+rX "$site"
echo "publish: $site is ready ($(find "$site" -type f | wc -l) files)"
