#!/usr/bin/env bash
# On a GPU machine, after suite.sh's layernorm step: our LayerNorm kernel's launch variants at
# the large shapes (>= 64 MiB), in the same call as the default sweep and its peers, to see
# whether a variant closes the gap to torch.compile and Triton there. One artifact per variant
# in $VARIANTS_OUT (default /tmp/ln_variants); the default run is suite.sh's layernorm.json.
#   bash scripts/device/layernorm_variants.sh /tmp/opbench-suite/layernorm_bench
set -uo pipefail
bench=${1:?usage: layernorm_variants.sh PATH_TO_layernorm_bench}
out=${VARIANTS_OUT:-/tmp/ln_variants}
mkdir -p "$out"
shapes=(--shape 4096x2048 --shape 4096x8192 --shape 16384x8192 --shape 32768x4096)
variant() {
    local name=$1; shift
    echo "=== $(date +%T) layernorm variant $name: $*"
    timeout 120 "$bench" "${shapes[@]}" "$@" --out "$out/$name.json" 2>&1 | grep -vE '^\[' | tail -3
}
variant bpt32 --bytes-per-thread 32
variant bpt128 --bytes-per-thread 128
variant bpt256 --bytes-per-thread 256
variant stream --kernel stream
variant fill --grid fill
