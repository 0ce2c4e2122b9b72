#!/usr/bin/env bash
# Runs layernorm_bench on the GPU machine in one go: GPU correctness of every kernel family on
# awkward shapes, the default sweep (-> $OUT/layernorm.json, the artifact to commit), the peers
# (torch, torch.compile, Triton: bench/peers/layernorm_peers.py on the sweep's points, merged into
# $OUT/layernorm.json, so it holds opbench, candle and the three peers of this call), then
# variants (the flush timing, 128 bytes per thread, a stricter rotation), and reprints the
# default sweep's table last. At most 8 files land in $OUT (the device tool's limit; the peer
# file stays in /tmp, its log goes to stdout). PEERS=0 skips the peers.
#
# Build here:  source /root/.cache/opbench/cuda-13.0/env.sh; touch kernels/*.cu
#              cargo build --release --features cuda --bin layernorm_bench
#              mkdir -p /work/main/.device-bin/NAME
#              xz -T2 -6 -c $CARGO_TARGET_DIR/release/layernorm_bench > /work/main/.device-bin/NAME/layernorm_bench.xz
#              cp scripts/device/layernorm.sh bench/peers/layernorm_peers.py /work/main/.device-bin/NAME/
# Run there (carry .device-bin/NAME):
#   OPBENCH_GIT_COMMIT=<sha> bash .device-bin/NAME/layernorm.sh 2>&1 | tee $OUT/log
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?set OUT to the folder for artifacts and logs}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OPBENCH_GIT_DIRTY=${OPBENCH_GIT_DIRTY:-0}
bin=/tmp/layernorm_bench
xz -dc "$here/layernorm_bench.xz" > "$bin" && chmod +x "$bin" || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv

echo "== 1. correctness on awkward shapes (scalar, vector, ring, warp-, block- and long-row kernels)"
timeout 60 "$bin" --shape 3x7 --shape 5x1023 --shape 7x1025 --shape 3x4097 --shape 2x8193 \
  --shape 40000x64 --shape 70000x96 --shape 300x16384 --shape 200x32768 --shape 3x65536 \
  --shape 2x100001 --samples 5 --batch 2 --warmup 1 --out /tmp/layernorm-awkward.json > "$out/awkward.txt" 2>&1
echo "rc=$?"; grep -E "failed|FAIL|error" "$out/awkward.txt" | head -20; tail -n 2 "$out/awkward.txt"

echo "== 2. the default sweep"
timeout 180 "$bin" --out "$out/layernorm.json" > "$out/default.txt" 2> "$out/default-progress.txt"
echo "rc=$?"

if [ "${PEERS:-1}" != 0 ] && [ -s "$out/layernorm.json" ]; then
  echo "== 2b. peers on the sweep's points: torch, torch.compile, triton"
  peer=$here/layernorm_peers.py
  [ -f "$peer" ] || peer=bench/peers/layernorm_peers.py
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  rm -f /tmp/ln_peers.json
  PYTHONUNBUFFERED=1 timeout 210 python3 "$peer" --plan "$out/layernorm.json" --out /tmp/ln_peers.json 2>&1 | tail -n 60
  echo "peers rc=${PIPESTATUS[0]}"
  # The file is rewritten after each shape, so a timeout still merges the shapes it finished.
  if [ -s /tmp/ln_peers.json ]; then
    "$bin" --merge /tmp/ln_peers.json --out "$out/layernorm.json"; echo "merge rc=$?"
  fi
fi

# VARIANTS: ';'-separated flag sets (at most 3: the file limit), e.g. "--kernel pipe;--bytes-per-thread 128".
big="--shape 4096x2048 --shape 4096x4096 --shape 4096x8192"
default_variants="--timing flush $big;--bytes-per-thread 128 --shape 4096x1024 $big;--rotate-l2-multiple 4 --shape 4x512x1024 --shape 4096x1024 --shape 4096x2048"
echo "== 3. variants (fewer samples): ${VARIANTS:-$default_variants}"
IFS=';' read -ra variants <<< "${VARIANTS:-$default_variants}"
i=0
for v in "${variants[@]}"; do
  i=$((i+1))
  # shellcheck disable=SC2086 # $v holds several flags
  timeout 45 "$bin" $v --samples 30 --batch 10 --out "$out/layernorm-variant$i.json" 2>&1 >/dev/null | { grep -E "error|caused" || true; } | head -5
  echo "variant $i ($v) rc=$?"
  "$bin" --table "$out/layernorm-variant$i.json" | grep -E "^\|.*(cold|warm)" | awk -F'|' -v v="$i" \
    '{printf "var%s %-11s %-4s %-4s ours %8s us  x%5s  %6s%% of copy  same-size copy %6s GB/s (ours %6s%%) %s\n", v, $2, $3, $4, $6, $8, $11, $12, $13, $15}'
done

echo "== default sweep"
cat "$out/default.txt"
