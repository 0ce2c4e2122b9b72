#!/usr/bin/env bash
# Runs layernorm_bench on the GPU machine in one go: GPU correctness of every kernel family on
# awkward shapes, the default sweep (-> $OUT/layernorm.json, the artifact to commit), then the
# register-budget variants of our kernel, and reprints the default sweep's table last.
#
# Build here:  source /root/.cache/opbench/cuda-13.0/env.sh
#              cargo build --release --features cuda --bin layernorm_bench
#              mkdir -p /work/main/.device-bin/layernorm
#              xz -T2 -6 -c $CARGO_TARGET_DIR/release/layernorm_bench > /work/main/.device-bin/layernorm/layernorm_bench.xz
#              cp scripts/device/layernorm.sh /work/main/.device-bin/layernorm/
# Run there (carry .device-bin/layernorm):
#   OPBENCH_GIT_COMMIT=<sha> bash .device-bin/layernorm/layernorm.sh 2>&1 | tee $OUT/log
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?set OUT to the folder for artifacts and logs}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OPBENCH_GIT_DIRTY=${OPBENCH_GIT_DIRTY:-0}
bin=/tmp/layernorm_bench
xz -dc "$here/layernorm_bench.xz" > "$bin" && chmod +x "$bin" || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv

echo "== 1. correctness on awkward shapes (scalar, vector, warp-, block- and long-row kernels)"
timeout 90 "$bin" --shape 3x7 --shape 5x1023 --shape 7x1025 --shape 3x4097 --shape 2x8193 \
  --shape 40000x64 --shape 3x65536 --shape 2x100001 --shape 70000x96 \
  --samples 5 --batch 2 --warmup 1 --out "$out/layernorm-awkward.json" > "$out/awkward.txt"
echo "rc=$?"; tail -n 3 "$out/awkward.txt"; grep -c "| failed |" "$out/awkward.txt"

echo "== 2. the default sweep"
timeout 240 "$bin" --out "$out/layernorm.json" > "$out/default.txt"
echo "rc=$?"

echo "== 3. register-budget variants of our kernel (fewer samples)"
for v in ${VARIANTS:-16 8}; do
  timeout 90 "$bin" --values-per-thread "$v" --samples 30 --batch 10 \
    --out "$out/layernorm-vpt$v.json" > /dev/null
  echo "vpt $v rc=$?"
  "$bin" --table "$out/layernorm-vpt$v.json" | grep -E "cold|warm" | awk -F'|' -v v="$v" \
    '{printf "vpt%-2s %-11s %-4s %-4s ours %8s us  x%5s  %6s%%  %s\n", v, $2, $3, $4, $6, $8, $11, $13}'
done

echo "== default sweep"
cat "$out/default.txt"
