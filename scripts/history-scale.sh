#!/usr/bin/env bash
# Benchmark of the dashboard on a long history: the committed artifacts plus a SYNTHETIC history
# of N commits (`history synth --commits N`, default 1000: 2 GPUs, 6,000 runs) in a temporary
# folder, rendered by the release `dashboard`. Prints the four figures docs/history.md reports:
# dashboard wall time (and its CPU time, which a loaded machine does not inflate), peak memory
# (/usr/bin/time -v), the largest HTML page and data file, and the time headless Chromium takes
# to draw the history page (tests/browser/history.mjs). Targets on a 2-core machine: <= 5 s,
# <= 500 MB, <= 5 MB, <= 10 s.
#
# usage: scripts/history-scale.sh [COMMITS]     (SHOTS=DIR also saves screenshots there)
set -euo pipefail
cd "$(dirname "$0")/.."
commits="${1:-1000}"

if [ ! -d tests/browser/node_modules/playwright-core ]; then
  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
fi
cargo build -q --release --locked --bin dashboard --bin history

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# synth writes only into a folder of its own (never beside measured artifacts): the synthetic
# history goes to $work/synth, then joins a copy of the committed artifacts.
cp -r artifacts "$work/input"
./target/release/history synth --commits "$commits" --out "$work/synth" >/dev/null
mkdir -p "$work/input/history"
cp -r "$work/synth/history/." "$work/input/history/"
runs=$(find "$work/input/history" -name '*.json.gz' | wc -l)
hist_mb=$(du -sm "$work/input/history" | cut -f1)

/usr/bin/time -v ./target/release/dashboard --artifacts "$work/input" --out "$work/site" \
  --plotly inline >/dev/null 2>"$work/time.txt"
field() { grep -F "$1" "$work/time.txt" | sed 's/.*: //'; }
wall=$(field "Elapsed (wall clock)")
user=$(field "User time")
sys=$(field "System time")
rss_kb=$(field "Maximum resident set size")

largest() {
  find "$work/site" -type f -name "$1" -printf '%s %P\n' | sort -n | tail -1 |
    awk '{ printf "%.2f MB (%s)", $1 / 1e6, $2 }'
}

echo "history: $runs runs ($hist_mb MB) of $commits synthetic commits + the committed artifacts"
echo "dashboard: wall $wall, CPU ${user}s user + ${sys}s sys, peak RSS $((rss_kb / 1024)) MB"
echo "largest HTML page: $(largest '*.html'); history.html $(find "$work/site" -name history.html -printf '%s' | awk '{ printf "%.3f MB", $1 / 1e6 }')"
echo "largest data file: $(find "$work/site/data" -type f -printf '%s %P\n' | sort -n | tail -1 | awk '{ printf "%.2f MB (%s)", $1 / 1e6, $2 }')"
node tests/browser/history.mjs --site "$work/site" --widths 1440 ${SHOTS:+--shot-prefix "$SHOTS/history-scale"}
