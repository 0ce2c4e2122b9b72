#!/usr/bin/env bash
# The one test command (README, .ci/run): formatting, lints, every test, the browser test of the
# dashboard, workflow and manifest checks, and the CUDA build (through scripts/cuda-toolchain.sh
# when no CUDA toolkit is installed) so GPU code cannot rot unseen on GPU-less machines.
# Installs and fetches what it needs on a fresh machine (crates, Chromium, nvcc from PyPI).
# Builds into cargo's target folder (./target or $CARGO_TARGET_DIR), all in the dev profile:
# the tests' build, whose dashboard also renders the browser test's pages, and the build with
# the `cuda` feature, which recompiles only what that feature changes (candle, cudarc, opbench)
# and serves CUDA clippy, the NVRTC tests and the wheel (scripts/wheel.sh, tried in a fresh venv
# by scripts/wheel-test.sh). Cargo.toml says why `cargo build` and `cargo test` share every
# compiled crate. The release build is the GPU workflow's and the device scripts' (the same code
# and features, optimised); docs/usage.md has the step times. Set OPBENCH_SKIP_CUDA=1 to leave
# the CUDA build and the wheel out.
# Each step prints its name and duration; a failing step is named on the last lines, which
# always end with the plain "N passed, N failed" totals of cargo test and the browser test.
set -euo pipefail
cd "$(dirname "$0")/.."

logs=$(mktemp -d)
current=""
started=$SECONDS
step_started=$SECONDS
step() {
    [ -z "$current" ] || printf '   (%ds)\n' $((SECONDS - step_started))
    current="$*"
    step_started=$SECONDS
    printf '\n== %s\n' "$*"
}

# Sums the "test result:" lines of cargo test and the "browser:" / "wheel-test: N passed, M
# failed" lines.
totals() {
    cat "$logs"/*.log 2>/dev/null | awk '
        /^test result:/ { n = split($0, a, /[ ;.]+/)
                          for (i = 1; i < n; i++) { if (a[i+1] == "passed") p += a[i]; if (a[i+1] == "failed") f += a[i] } }
        /^(browser|wheel-test): [0-9]+ passed, [0-9]+ failed/ { p += $2; f += $4 }
        END { printf "%d %d\n", p, f }'
}

finish() {
    local rc=$?
    # A browser test still running when a step failed: stop it and its Chromium.
    [ -z "${browser_pid:-}" ] || kill -TERM -- "-$browser_pid" 2>/dev/null || true
    read -r passed failed < <(totals)
    if [ "$rc" -ne 0 ]; then
        printf '\ntest.sh: FAILED at step "%s" (exit status %d, after %ds); the output above says why.\n' \
            "$current" "$rc" $((SECONDS - started))
        # A step that failed without failing a counted test still counts as one failure.
        [ "$failed" -gt 0 ] || failed=1
    else
        printf '   (%ds)\n\ntest.sh: every step passed in %ds\n' $((SECONDS - step_started)) $((SECONDS - started))
    fi
    rm -rf "$logs"
    printf '%d passed, %d failed\n' "$passed" "$failed"
}
trap finish EXIT

step "cargo fetch (every crate of Cargo.lock, the optional CUDA ones too)"
cargo fetch --locked

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (CPU build)"
cargo clippy --all-targets --locked -- -D warnings

step "cargo test"
cargo test --locked 2>&1 | tee "$logs/cargo-test.log"

# The browser test renders its pages with the dashboard and summarize of `cargo test`'s build
# (the same pages as a release build's, in seconds) and compiles nothing, so it runs beside the
# CUDA steps (in its own session, stopped if the run ends early); its output follows them.
browser_pid=""
if [ -f scripts/browser-test.sh ]; then
    step "scripts/browser-test.sh: started, beside the steps below"
    OPBENCH_BIN_DIR="${CARGO_TARGET_DIR:-$PWD/target}/debug" setsid bash -c \
        'bash scripts/browser-test.sh >"$1/browser-test.log" 2>&1; echo $? >"$1/browser-test.rc"' \
        _ "$logs" &
    browser_pid=$!
    browser_started=$SECONDS
fi

if [ "${OPBENCH_SKIP_CUDA:-0}" != "1" ]; then
    if [ -z "${CUDA_ROOT:-}" ] && ! command -v nvcc >/dev/null 2>&1; then
        step "CUDA toolchain (scripts/cuda-toolchain.sh: nvcc 13.0 from PyPI, link stubs)"
        env_file=$(bash scripts/cuda-toolchain.sh)
        # shellcheck disable=SC1090
        source "$env_file"
    fi
    # candle-kernels' nvcc compiles use half the cores unless told (CUDAFORGE_THREADS), and
    # nothing else can build while they run: candle waits for them.
    step "CUDA build (cargo build --features cuda)"
    CUDAFORGE_THREADS="${CUDAFORGE_THREADS:-$(nproc)}" cargo build --features cuda --locked
    step "cargo clippy --features cuda"
    cargo clippy --features cuda --all-targets --locked -- -D warnings
    # The CUPTI injection library of `trace` (its own small crate: about 30 s on 2 cores).
    step "trace injection library (cargo build --release -p opbench-trace-inject)"
    cargo build --release -p opbench-trace-inject --locked
    cargo clippy --release -p opbench-trace-inject --all-targets --locked -- -D warnings
    cargo test --release -p opbench-trace-inject --locked
    step "NVRTC compilation tests (scripts/test-nvrtc.sh)"
    bash scripts/test-nvrtc.sh 2>&1 | tee "$logs/nvrtc.log"
    step "wheel (scripts/wheel.sh), installed and tried in a fresh venv (scripts/wheel-test.sh)"
    wheel=$(OPBENCH_WHEEL_PROFILE=dev bash scripts/wheel.sh | tail -1)
    bash scripts/wheel-test.sh "$wheel" 2>&1 | tee "$logs/wheel-test.log"
fi

if [ -n "$browser_pid" ]; then
    step "scripts/browser-test.sh (started $((SECONDS - browser_started))s ago)"
    wait "$browser_pid" || true
    browser_pid=""
    cat "$logs/browser-test.log"
    browser_rc=$(cat "$logs/browser-test.rc" 2>/dev/null || echo 1)
    [ "$browser_rc" = 0 ] || exit "$browser_rc"
fi

for extra in scripts/ci/lint-workflows.sh scripts/ci/validate-k8s.sh; do
    if [ -f "$extra" ]; then
        step "$extra"
        bash "$extra" 2>&1 | tee "$logs/$(basename "$extra" .sh).log"
    fi
done
