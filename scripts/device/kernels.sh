#!/usr/bin/env bash
# On the GPU machine: unpack the carried kernel_bench and run, in one call,
#   1. the example manifest with --profile (the committed artifacts/kernels.json and report),
#   2. the built-in matmul convention (no manifest),
#   3. a manifest with scalars and an inout buffer (tests/fixtures/kernels/saxpy.toml),
#   4. a kernel that faults (must exit non-zero and keep the points measured before it),
#   5. a source that does not compile (must exit non-zero and show NVRTC's log).
# Usage, from a folder holding examples/ and tests/fixtures/kernels/ (the repository root):
#   bash scripts/device/kernels.sh .device-bin/kernels
set -uo pipefail
bin_dir="$1"
out="${OUT:-/tmp/opbench-out}"
mkdir -p "$out" /tmp/opbench-bin
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
xz -dc "$bin_dir/kernel_bench.xz" > /tmp/opbench-bin/kernel_bench
chmod +x /tmp/opbench-bin/kernel_bench
kb=/tmp/opbench-bin/kernel_bench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv
ncu --version | tail -n 1
status=0
step() { printf '\n== %s\n' "$*"; }

step "1. example manifest, profiled"
$kb --manifest examples/matmul_kernels.toml --profile --profile-budget-s 240 \
    --out "$out/kernels.json" --ncu-raw "$out/ncu_raw.csv" || status=1

step "2. built-in matmul convention"
$kb --source examples/matmul_kernels.cu --kernel matmul_naive --kernel matmul_tiled \
    --param N=256,512,1024 --no-ceilings \
    --out "$out/convention.json" --report /tmp/convention_report.txt || status=1

step "3. saxpy manifest: scalars, an inout buffer, a block sweep"
$kb --manifest tests/fixtures/kernels/saxpy.toml --no-ceilings \
    --out "$out/saxpy.json" --report /tmp/saxpy_report.txt || status=1

step "4. a faulting kernel: must fail and keep the points measured before the fault"
if $kb --manifest tests/fixtures/kernels/fault.toml --no-ceilings \
    --out "$out/fault.json" --report /tmp/fault_report.txt; then
    echo "UNEXPECTED: the faulting run exited 0"
    status=1
else
    cat /tmp/fault_report.txt
fi

step "5. a compile error: must fail with NVRTC's log"
if $kb --source tests/fixtures/kernels/compile_error.cu --kernel broken --param N=64 \
    --no-ceilings --out /tmp/compile_error.json; then
    echo "UNEXPECTED: the compile-error run exited 0"
    status=1
fi
step "done, status $status"
exit $status
