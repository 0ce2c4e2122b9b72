#!/usr/bin/env bash
# CI's test step (ci.yml): exactly the project's one test command, scripts/test.sh (fmt,
# clippy, cargo test, the dashboard's browser test, lint-workflows.sh, validate-k8s.sh, the
# CUDA build). Kept as a separate entry point so workflows only ever call scripts/ci/*.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash scripts/test.sh "$@"
