#!/usr/bin/env bash
# Runs the compilation tests on a machine without a GPU: NVRTC (tests/kernels_nvrtc.rs) against
# the real libnvrtc 13.0 from PyPI (fetched once into ~/.cache/opbench/nvrtc-13.0), and nvcc
# (tests/kernels_cpp.rs) with the nvcc 13.0 of scripts/cuda-toolchain.sh. Sets
# OPBENCH_REQUIRE_NVRTC=1 and OPBENCH_REQUIRE_NVCC=1, so the tests fail rather than skip if
# either cannot be used.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${OPBENCH_NVRTC_DIR:-$HOME/.cache/opbench/nvrtc-13.0}"
lib="$dir/nvidia/cu13/lib"
if [ ! -f "$lib/libnvrtc.so.13" ]; then
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
        -d "$dir/whl" "nvidia-cuda-nvrtc==13.0.*"
    unzip -q -o "$dir"/whl/nvidia_cuda_nvrtc-*.whl -d "$dir"
fi
if [ -z "${OPBENCH_CUDA_STUBS:-}" ]; then
    env_file=$(bash scripts/cuda-toolchain.sh)
    # shellcheck disable=SC1090
    source "$env_file"
fi
# The real NVRTC first; libcudart from the toolchain wheels; the rest are link-time stubs
# (never called here).
export LD_LIBRARY_PATH="$lib:$OPBENCH_CUDA_STUBS:$CUDA_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The dev profile reuses scripts/test.sh's CUDA build (it builds that first).
OPBENCH_REQUIRE_NVRTC=1 OPBENCH_REQUIRE_NVCC=1 cargo test --features cuda \
    --test kernels_nvrtc --test kernels_cpp
