#!/usr/bin/env bash
# Times opbench decode-path variants on the GPU machine in one call, for kernel work: several
# llm_bench builds (DIR/<name>.xz) and run-time flag sets, each run ROUNDS times in alternating
# order so that machine drift shows as spread rather than as a difference. Every build's
# self-test runs first (a build whose kernels fail it is not timed). Prints one table row per
# run (decode tokens/s, % of the bound measured in the same process) and, with
# ABLATION=1, each run's in-graph cost per kernel class.
#
# Build here:  source ~/.cache/opbench/cuda-13.0/env.sh
#              cargo build --release --features cuda --bin llm_bench
#              mkdir -p .device-bin/dec && xz -T2 -6 -c target/release/llm_bench > .device-bin/dec/new.xz
# Run there (carry .device-bin/dec):
#   VARIANTS="old --batch 1;new --batch 1;new --batch 1 --opbench-attn-split 64" \
#       bash scripts/device/decode_variants.sh .device-bin/dec
# Each variant is '<build name> <llm_bench flags>'; TinyLlama-1.1B random f16 weights, opbench
# only, REPEATS (default 3) timed generations per point. Logs and artifacts: $OUT/$TAG.tar.gz.
set -uo pipefail
dir=${1:?usage: decode_variants.sh DIR_WITH_BUILDS}
out=${OUT:?set OUT to the folder for artifacts and logs}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
tag=${TAG:-decode_variants}
work=/tmp/$tag
rm -rf "$work" && mkdir -p "$work/bin"
exec > >(tee "$out/$tag.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks_throttle_reasons.active --format=csv
IFS=';' read -ra variants <<< "${VARIANTS:?set VARIANTS to ';'-separated '<build> <flags>' entries}"
declare -A ok
for v in "${variants[@]}"; do
    name=${v%% *}
    [ -n "${ok[$name]+x}" ] && continue
    ok[$name]=0
    if ! xz -dc "$dir/$name.xz" > "$work/bin/$name" 2>/dev/null; then
        echo "no build $dir/$name.xz"
        continue
    fi
    chmod +x "$work/bin/$name"
    timeout 120 "$work/bin/$name" --self-test > "$work/selftest-$name.txt" 2>&1
    rc=$?
    # SELFTEST=0: time builds whose self-test fails (diagnosis only; each run still checks
    # parity, and a failed parity is printed).
    [ "${SELFTEST:-1}" = 0 ] && rc=0
    echo "self-test $name: rc $rc, $(grep -c PASS "$work/selftest-$name.txt") passed, $(grep -c FAIL "$work/selftest-$name.txt") failed"
    grep FAIL "$work/selftest-$name.txt" | head -5
    [ $rc -eq 0 ] && ok[$name]=1
done
for round in $(seq 1 "${ROUNDS:-2}"); do
    i=0
    for v in "${variants[@]}"; do
        i=$((i + 1))
        name=${v%% *}
        flags=${v#"$name"}
        [ "${ok[$name]}" = 1 ] || continue
        ablation=()
        [ "${ABLATION:-0}" = 1 ] && ablation=(--opbench-ablation)
        json="$work/r$round-v$i.json"
        # shellcheck disable=SC2086 # $flags holds several flags
        timeout 300 "$work/bin/$name" --weights random --config tinyllama-1.1b --impl opbench \
            --repeats "${REPEATS:-3}" "${ablation[@]}" $flags --out "$json" --quiet \
            > "$work/r$round-v$i.txt" 2>&1 || echo "v$i ($v) failed: $(tail -3 "$work/r$round-v$i.txt")"
        python3 - "$json" "r$round v$i $v" <<'PY'
import json, sys
try:
    a = json.load(open(sys.argv[1]))
except Exception as e:
    print(sys.argv[2], "no artifact:", e); sys.exit()
copy = a["ceilings"]["copy_gbps"]
for r in a["results"]:
    m = r.get("metrics") or {}
    c = r.get("correctness") or {}
    print(f'{sys.argv[2]:60s} b{r["params"]["batch"]:<3} {r["status"]:6s} '
          f'{m.get("decode_tokens_per_s", 0):9.1f} tok/s  {m.get("pct_of_bandwidth_bound", 0):5.1f}% of bound  '
          f'copy {copy:.0f} GB/s  parity {c.get("passed")}')
    for n in r.get("notes", []):
        if "ablation" in n or "in-graph" in n or "without" in n:
            print("     ", n)
PY
    done
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks_throttle_reasons.active --format=csv,noheader
tar -czf "$out/$tag.tar.gz" -C "$work" --exclude bin .
