#!/usr/bin/env bash
# On the GPU machine: unpack the carried opbench_env and print the environment block and copy
# ceiling. Usage (from the repo root there): bash scripts/device/env.sh .device-bin/env
set -euo pipefail
bin_dir="$1"
out="${OUT:-/tmp/opbench-out}"
mkdir -p "$out" /tmp/opbench-bin
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -dc "$bin_dir/opbench_env.xz" > /tmp/opbench-bin/opbench_env
chmod +x /tmp/opbench-bin/opbench_env
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv
/tmp/opbench-bin/opbench_env --ceilings | tee "$out/env.json"
