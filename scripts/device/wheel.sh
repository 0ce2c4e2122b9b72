#!/usr/bin/env bash
# On the GPU machine (no Rust there): install the carried wheel into a fresh venv and try it as a
# new user would (scripts/wheel-test.sh: every command's --help, kernel_bench on examples/,
# `trace` of a PyTorch script, the dashboard). The machine has no PyPI: the venv reads the
# environment of the machine's torch (with its nvidia-* CUDA 13 wheels) through a .pth file, and
# the wheel goes in with --no-deps.
# Usage, from the repo root there: bash scripts/device/wheel.sh WHEEL
# WHEEL is the .whl, or NAME.whl.tar.xz (scripts/device/wheel-lib.sh says how to make one).
set -euo pipefail
wheel="${1:?usage: scripts/device/wheel.sh WHEEL}"
out="${OUT:-/tmp/opbench-out}"
mkdir -p "$out"
source "$(dirname "$0")/wheel-lib.sh"
wheel=$(wheel_file "$wheel")
{
    nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv || echo "no nvidia-smi"
    python3 --version
    ldd --version 2>&1 | sed -n 1p
    for t in cargo rustc nvcc; do command -v "$t" >/dev/null && echo "$t: $(command -v "$t")" || echo "$t: none"; done
    python3 -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)" || true
    echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
} 2>&1 | tee "$out/machine.txt"
torch_site=$(torch_site)
OPBENCH_WHEEL_SITE="$torch_site" OPBENCH_WHEEL_KEEP="$out/wheel" bash scripts/wheel-test.sh "$wheel" 2>&1 \
    | tee "$out/wheel-test.log"
