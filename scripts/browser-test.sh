#!/usr/bin/env bash
# Real-browser test of the dashboard: renders the fixture artifacts, the hostile fixtures, an
# empty folder and the committed artifacts (if any) as the README's main command does (no
# --plotly flag: the local Plotly copy), then opens every page from file:// with the network off
# in headless Chromium (tests/browser/check.mjs), at 1440 and 390 px (and the page frame of a
# copy grown to 50 traced workloads, tests/browser/many_traces.py), and saves the first screen
# of every page at both widths to report/ (<page>-1440.png, <page>-390.png);
# tests/browser/history.mjs draws the history page first. Then the
# Vercel deployment: the prebuilt output folder (scripts/ci/vercel-prebuilt.sh) of the inline
# fixture site and of the site exactly as scripts/ci/publish.sh renders it for Pages and Vercel
# (--plotly cdn; the committed artifacts, or the fixtures when there are none), each served on
# 127.0.0.1 with its config.json headers and checked page by page for Content-Security-Policy
# violations. Installs Debian's chromium, Node.js and playwright-core when absent.
# OPBENCH_BIN_DIR: a folder that already holds dashboard and summarize (scripts/test.sh passes its
# test build, so nothing is compiled twice); without it they are built here.
# Exits non-zero on any failure; the last line reads "browser: N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing ${need_apt[*]} (apt-get)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if [ ! -d tests/browser/node_modules/playwright-core ]; then
  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ -z "${OPBENCH_BIN_DIR:-}" ]; then
  cargo build --release --locked --bin dashboard --bin summarize
  OPBENCH_BIN_DIR="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release"
fi
export OPBENCH_BIN_DIR
dash() { "$OPBENCH_BIN_DIR/dashboard" "$@"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/empty"
dash --artifacts tests/fixtures/artifacts --out "$work/fixtures"
dash --artifacts tests/fixtures/hostile --out "$work/hostile"
dash --artifacts "$work/empty" --out "$work/none"
sites=(--site "$work/fixtures" --site "$work/none")
shot="$work/fixtures"
if [ -n "$(find artifacts -name '*.json' ! -name 'summary.json' ! -name '.*' 2>/dev/null | head -1)" ]; then
  dash --artifacts artifacts --out "$work/committed"
  sites+=(--site "$work/committed")
  shot="$work/committed"
fi

# The frame at scale: the committed artifacts (else the fixtures) grown to 50 traced workloads.
scale_from=tests/fixtures/artifacts
[ -d "$work/committed" ] && scale_from=artifacts
python3 tests/browser/many_traces.py "$scale_from" "$work/many-input" 50 >/dev/null
dash --artifacts "$work/many-input" --out "$work/many" >/dev/null

# The history page: every small chart drawn with its legend, at desktop and phone widths.
history=0
calibration=()
[ "$shot" = "$work/committed" ] && [ -f artifacts/calibration.json ] && calibration=(--calibration 1)
node tests/browser/history.mjs --site "$shot" --widths 1440,390 "${calibration[@]}" || history=1
published_from=tests/fixtures/artifacts
[ -d "$work/committed" ] && published_from=artifacts
OPBENCH_ARTIFACTS="$published_from" bash scripts/ci/publish.sh "$work/published" >/dev/null
bash scripts/ci/vercel-prebuilt.sh "$work/fixtures" "$work/vercel-inline/.vercel/output"
bash scripts/ci/vercel-prebuilt.sh "$work/published" "$work/vercel-published/.vercel/output"
# It must refuse a page that the CSP would break: one with an inline script.
cp -a "$work/fixtures" "$work/inline-code"
sed -i 's#</body>#<script>document.title = "inline"</script></body>#' "$work/inline-code/index.html"
if bash scripts/ci/vercel-prebuilt.sh "$work/inline-code" "$work/vercel-refused/.vercel/output" 2>/dev/null; then
  echo "browser-test: vercel-prebuilt.sh accepted a page with an inline script" >&2
  exit 1
fi
vercel=(--vercel "$work/vercel-inline/.vercel/output" --vercel-from "$work/fixtures"
  --vercel-filters "$work/vercel-inline/.vercel/output"
  --vercel "$work/vercel-published/.vercel/output" --vercel-from "$work/published")

node tests/browser/check.mjs "${sites[@]}" --hostile "$work/hostile" --filters "$work/fixtures" "${vercel[@]}" \
  --scale "$work/many" \
  --screenshot-site "$shot" --report report ${BROWSER_SHOTS:+--shots "$BROWSER_SHOTS"}
exit "$history"
