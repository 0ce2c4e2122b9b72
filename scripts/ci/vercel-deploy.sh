#!/usr/bin/env bash
# Deploys a rendered site (scripts/ci/publish.sh SITE) to Vercel as prebuilt output:
# scripts/ci/vercel-prebuilt.sh builds .vercel/output in a fresh temporary folder and the Vercel
# CLI (npm package `vercel`, version pinned below) uploads it with `vercel deploy --prebuilt`,
# nothing else: Vercel builds nothing. A production deployment with --prod, a preview otherwise.
#
# Needs Node.js (npx) and three environment variables, the GitHub secrets of the same names
# (docs/deploy.md, section "Vercel", says where each comes from): VERCEL_TOKEN, VERCEL_ORG_ID,
# VERCEL_PROJECT_ID. When one is missing (pull requests from forks get no secrets; a repository
# without Vercel has none) it deploys nothing, says so in the GitHub job summary and exits 0.
# On GitHub Actions it writes `enabled=true|false` and `url=` (the deployment's address, empty
# when nothing was deployed) to $GITHUB_OUTPUT.
#
# Usage: scripts/ci/vercel-deploy.sh SITE [--prod]
#        scripts/ci/vercel-deploy.sh --check      (only: are the three variables set?)
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=vercel@60.1.3
usage="usage: scripts/ci/vercel-deploy.sh SITE [--prod] | --check"

summary() {
    echo "vercel-deploy: $*"
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then printf '%s\n\n' "$*" >>"$GITHUB_STEP_SUMMARY"; fi
}
output() {
    if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s\n' "$1" >>"$GITHUB_OUTPUT"; fi
}

missing=()
for var in VERCEL_TOKEN VERCEL_ORG_ID VERCEL_PROJECT_ID; do
    [ -n "${!var:-}" ] || missing+=("$var")
done
if [ ${#missing[@]} -gt 0 ]; then
    summary "**Vercel: nothing deployed.** The secret(s) ${missing[*]} are not set for this run" \
        "(pull requests from forks get no secrets; a repository without a Vercel project has none)." \
        "docs/deploy.md, section \"Vercel\", says how to set them."
    output enabled=false
    output url=
    exit 0
fi
output enabled=true
[ "${1:-}" = "--check" ] && exit 0

site="${1:?$usage}"
target=preview
case "${2:-}" in
    --prod) target=production ;;
    "") ;;
    *) echo "$usage" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash scripts/ci/vercel-prebuilt.sh "$site" "$work/.vercel/output"

# The CLI reads the token from VERCEL_TOKEN (not from the command line, where `ps` shows it) and
# links the project from VERCEL_ORG_ID and VERCEL_PROJECT_ID. It prints the deployment as JSON on
# stdout, progress on stderr, and waits until the deployment is ready.
export VERCEL_TELEMETRY_DISABLED=1
echo "vercel-deploy: npx $cli deploy --prebuilt --target=$target" >&2
npx --yes "$cli" deploy --prebuilt --cwd "$work" --target="$target" --yes --format=json >"$work/deploy.json"
# shellcheck disable=SC2016  # the ${...} below are JavaScript template literals, not shell
url=$(node -e '
const s = require("fs").readFileSync(process.argv[1], "utf8");
const j = JSON.parse(s.slice(s.indexOf("{")));
const d = j.deployment || j;
if (d.readyState !== "READY" || !/^https:\/\//.test(d.url || "")) {
  console.error(`vercel-deploy: the deployment is not ready: ${JSON.stringify(d)}`);
  process.exit(1);
}
process.stdout.write(d.url);
' "$work/deploy.json")
output "url=$url"
summary "**Vercel $target deployment:** $url"
