#!/usr/bin/env bash
# Times layernorm_bench variants on the GPU machine in one call, for kernel work: each
# ';'-separated flag set in VARIANTS runs over SHAPES (fewer samples than the default sweep)
# and prints one line per cold and warm point: ours, % of the 1 GiB copy, the same-size
# cuMemcpyDtoD and the same-size copy kernel. Every variant's artifact goes into one tarball
# ($OUT/$TAG.tar.gz, TAG defaulting to "variants") beside $OUT/$TAG.log, so the device tool's
# 8-file limit never bites and several binaries can be compared in one call.
#
# Build here:  source /root/.cache/opbench/cuda-13.0/env.sh; touch kernels/*.cu
#              cargo build --release --features cuda --bin layernorm_bench
#              mkdir -p .device-bin/lnvar
#              xz -T2 -6 -c target/release/layernorm_bench > .device-bin/lnvar/layernorm_bench.xz
# Run there (carry .device-bin/lnvar):
#   VARIANTS="--kernel regs;--kernel stream" OPBENCH_GIT_COMMIT=<sha> \
#       bash scripts/device/layernorm_variants.sh .device-bin/lnvar
set -uo pipefail
dir=${1:?usage: layernorm_variants.sh DIR_WITH_layernorm_bench.xz}
out=${OUT:?set OUT to the folder for artifacts and logs}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OPBENCH_GIT_DIRTY=${OPBENCH_GIT_DIRTY:-0}
bin=/tmp/layernorm_bench
xz -dc "$dir/layernorm_bench.xz" > "$bin" && chmod +x "$bin" || exit 1
tag=${TAG:-variants}
exec > >(tee "$out/$tag.log") 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv
shapes=${SHAPES:---shape 4096x2048 --shape 4096x4096 --shape 4096x8192 --shape 16384x8192}
samples=${SAMPLES:---samples 30 --batch 10}
work=/tmp/$tag; rm -rf "$work"; mkdir -p "$work"
IFS=';' read -ra variants <<< "${VARIANTS:?set VARIANTS to ';'-separated flag sets}"
i=0
for v in "${variants[@]}"; do
  i=$((i+1))
  echo "== variant $i: $v"
  # shellcheck disable=SC2086 # $v, $shapes and $samples hold several flags each
  timeout 120 "$bin" $v $shapes $samples --out "$work/variant$i.json" 2>&1 >/dev/null \
    | { grep -E "error|caused|FAIL" || true; } | head -5
  "$bin" --table "$work/variant$i.json" | grep -E "^\|.*(cold|warm)" | awk -F'|' -v v="$i" \
    '{printf "v%s %-11s %-4s %-4s ours %7s us %6s%% of copy | memcpy %5s GB/s (ours %5s%%) | copy kernel %5s GB/s | %s\n", v, $2, $3, $4, $6, $11, $12, $13, $14, $16}'
done
tar -czf "$out/$tag.tar.gz" -C "$work" .
