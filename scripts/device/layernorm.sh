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

echo "== 1. correctness on awkward shapes (scalar, vector, ring, warp-, block- and long-row kernels)"
timeout 120 "$bin" --shape 3x7 --shape 5x1023 --shape 7x1025 --shape 3x4097 --shape 2x8193 \
  --shape 40000x64 --shape 70000x96 --shape 300x16384 --shape 200x32768 --shape 3x65536 \
  --shape 2x100001 --samples 5 --batch 2 --warmup 1 --out "$out/layernorm-awkward.json" > "$out/awkward.txt" 2>&1
echo "rc=$?"; grep -E "failed|FAIL|error" "$out/awkward.txt" | head -20; tail -n 2 "$out/awkward.txt"

echo "== 2. the default sweep"
timeout 240 "$bin" --out "$out/layernorm.json" > "$out/default.txt" 2> "$out/default-progress.txt"
echo "rc=$?"

# VARIANTS: ';'-separated flag sets, e.g. "--kernel pipe;--bytes-per-thread 64".
echo "== 3. variants of our kernel (fewer samples): ${VARIANTS:---bytes-per-thread 64}"
IFS=';' read -ra variants <<< "${VARIANTS:---bytes-per-thread 64}"
i=0
for v in "${variants[@]}"; do
  i=$((i+1))
  # shellcheck disable=SC2086 # $v holds several flags
  timeout 120 "$bin" $v --samples 30 --batch 10 --out "$out/layernorm-variant$i.json" 2>&1 >/dev/null | { grep -E "error|caused" || true; } | head -5
  echo "variant $i ($v) rc=$?"
  "$bin" --table "$out/layernorm-variant$i.json" | grep -E "cold|warm" | awk -F'|' -v v="$i" \
    '{printf "var%s %-11s %-4s %-4s ours %8s us  x%5s  %6s%%  %s\n", v, $2, $3, $4, $6, $8, $11, $13}'
done

echo "== default sweep"
cat "$out/default.txt"
