#!/usr/bin/env bash
# Commits the new run files under artifacts/history/ and pushes them to the current branch's
# upstream (gpu-bench.yml: main), rebasing on what other machines pushed meanwhile. Run files
# are new files with unique names, so a rebase never conflicts; only the push may race, and
# it is retried. Usage: scripts/ci/push-history.sh "commit message"
set -euo pipefail
cd "$(dirname "$0")/../.."
msg="${1:-record GPU runs}"
git add artifacts/history
if git diff --cached --quiet; then
    echo "push-history: no new run files"
    exit 0
fi
git -c user.name="opbench-bot" -c user.email="opbench-bot@users.noreply.github.com" \
    commit --quiet -m "$msg"
branch="${GITHUB_REF_NAME:-$(git rev-parse --abbrev-ref HEAD)}"
for attempt in 1 2 3 4 5; do
    if git pull --quiet --rebase origin "$branch" && git push --quiet origin "HEAD:$branch"; then
        echo "push-history: pushed $(git diff --name-only HEAD~1 HEAD | wc -l) run files to $branch"
        exit 0
    fi
    echo "push-history: push attempt $attempt failed; retrying" >&2
    sleep $((attempt * 5))
done
echo "push-history: could not push after 5 attempts" >&2
exit 1
