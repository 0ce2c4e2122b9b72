#!/usr/bin/env bash
# Builds the opbench wheel into target/wheels/ with maturin (pyproject.toml): the `opbench`
# launcher, `opbench-cpu`, `opbench-gpu` (all with the `cuda` feature), the CUPTI injection
# library beside them and python/opbench. OPBENCH_WHEEL_PROFILE (default release) is the cargo
# profile of the commands: after `cargo build --features cuda` of that profile it only links
# (scripts/test.sh builds and tries a dev-profile wheel; a wheel to hand out is a release one).
# The injection library is always a release build (its own small crate). Needs the CUDA
# toolchain (scripts/cuda-toolchain.sh, sourced when no nvcc); maturin is installed from PyPI into the CI tools venv (scripts/ci/lib.sh) when absent.
# The tag is manylinux_2_34 (glibc 2.34, what this build machine's glibc symbols need: maturin
# checks them); the CUDA libraries are not in the wheel (pip's nvidia-* packages, the driver),
# so maturin's library audit, which would refuse or copy them, is off.
# Prints the wheel's path on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${OPBENCH_WHEEL_PROFILE:-release}"
source scripts/ci/lib.sh
if [ -z "${CUDA_ROOT:-}" ] && ! command -v nvcc >/dev/null 2>&1; then
    env_file=$(bash scripts/cuda-toolchain.sh)
    # shellcheck disable=SC1090
    source "$env_file"
fi
venv=$(ci_venv)
if [ ! -x "$venv/bin/maturin" ]; then
    echo "wheel: installing maturin from PyPI into $venv" >&2
    ci_pip "$venv" "maturin>=1.9,<2"
fi
cargo build --release --locked -p opbench-trace-inject
rm -rf target/wheel-data target/wheels
mkdir -p target/wheel-data/scripts
cp target/release/libopbench_trace_inject.so target/wheel-data/scripts/
"$venv/bin/maturin" build --profile "$profile" --locked --compatibility manylinux_2_34 --auditwheel skip \
    --out target/wheels >&2
ls target/wheels/opbench-*.whl
