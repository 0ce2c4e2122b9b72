#!/usr/bin/env bash
# On the GPU machine: kernel_bench on kernel files written for their own programs, in one call:
#   0. the layernorm file compiles and runs as its own program (its main() checks kernel 3),
#   1. that file, unmodified, through --compiler nvcc: checked, timed and profiled (ncu),
#   2. the same kernels through NVRTC (the copy with the host code guarded), checked, timed,
#      profiled,
#   3. kernel template instances in a namespace (the softmax file), compiler auto,
#   4. the unguarded file through --compiler nvrtc: must fail, naming the host header.
# Usage, from the repository root (or a copy of it holding tests/fixtures/kernels/):
#   OPBENCH_GIT_COMMIT=<sha> bash scripts/device/kernels_cpp.sh .device-bin/kernels
# where .device-bin/kernels/kernel_bench.xz is `xz -c target/release/kernel_bench` of a
# `--features cuda` build. Artifacts and reports go to $OUT (default /tmp/opbench-out).
set -uo pipefail
bin_dir="$1"
out="${OUT:-/tmp/opbench-out}"
mkdir -p "$out" /tmp/opbench-bin
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
export OPBENCH_GIT_DIRTY=${OPBENCH_GIT_DIRTY:-0}
xz -dc "$bin_dir/kernel_bench.xz" > /tmp/opbench-bin/kernel_bench
chmod +x /tmp/opbench-bin/kernel_bench
kb=/tmp/opbench-bin/kernel_bench
llmc=tests/fixtures/kernels/llmc
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv
nvcc --version | tail -n 2
ncu --version | tail -n 1
status=0
step() { printf '\n== %s\n' "$*"; }

step "0. the layernorm file as its own program (nvcc, its main() compares kernel 3 with the CPU)"
nvcc -O3 -arch=sm_90 -o /tmp/layernorm_forward "$llmc/layernorm_forward.cu" \
    && /tmp/layernorm_forward 3 || status=1

step "1. unmodified file, --compiler nvcc, profiled"
$kb --manifest "$llmc/layernorm_forward.toml" --compiler nvcc --profile --profile-budget-s 150 \
    --point-budget-ms 200 --out "$out/kernels-llmc-nvcc.json" \
    --report "$out/kernels-llmc-nvcc_report.txt" || status=1

step "2. host code guarded, --compiler nvrtc, profiled"
$kb --manifest "$llmc/layernorm_forward.toml" --source "$llmc/layernorm_forward_rtc.cu" \
    --compiler nvrtc --profile --profile-budget-s 150 --point-budget-ms 200 --no-ceilings \
    --out "$out/kernels-llmc-nvrtc.json" --report "$out/kernels-llmc-nvrtc_report.txt" || status=1

step "3. template instances in a namespace, compiler auto"
$kb --manifest tests/fixtures/kernels/cpp/softmax_forward.toml --point-budget-ms 200 \
    --no-ceilings --out "$out/kernels-softmax.json" --report "$out/kernels-softmax_report.txt" \
    || status=1

step "4. the unguarded file through NVRTC: must fail naming the host header"
if $kb --manifest "$llmc/layernorm_forward.toml" --compiler nvrtc --no-ceilings \
    --out /tmp/unguarded.json 2>/tmp/unguarded.err; then
    echo "UNEXPECTED: NVRTC compiled the unguarded file"
    status=1
elif ! grep -q "host header <stdio.h>" /tmp/unguarded.err; then
    echo "UNEXPECTED message:"; cat /tmp/unguarded.err
    status=1
else
    grep -m1 "host header" /tmp/unguarded.err | cut -c1-400
fi
step "done, status $status"
exit $status
