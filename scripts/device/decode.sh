#!/usr/bin/env bash
# scripts/device/decode.sh: the opbench decode-path GPU run in one call: the kernels' self-test
# against float64 references, candle vs opbench on TinyLlama-1.1B (random f16 weights) at batch
# 1/4/16 with the in-graph ablation, opbench without programmatic dependent launch at batch 1,
# and opbench's parity against candle on the whole config ladder.
#
# Usage (on the GPU machine, from the repo root): OUT=/some/dir bash scripts/device/decode.sh DIR
# where DIR holds llm_bench.xz (`cargo build --release --features cuda --bin llm_bench`,
# xz-compressed). Outputs in $OUT: selftest.txt, llm.json, pdl_off.json, ladder.json,
# run.txt (the tables) and notes.txt (each opbench row's parity, launch and ablation notes).
set -uo pipefail
DIR=${1:?usage: decode.sh DIR_WITH_llm_bench.xz}
OUT=${OUT:?set OUT to an output folder}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
BIN=/tmp/llm_bench
xz -dc "$DIR/llm_bench.xz" > $BIN && chmod +x $BIN || exit 1
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$OUT/env.txt"
echo "clocks sm/mem, throttle reasons at start: $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks_throttle_reasons.active --format=csv,noheader)" | tee -a "$OUT/env.txt"
echo "=== $(date +%T) self-test"
timeout 120 $BIN --self-test > "$OUT/selftest.txt" 2>&1; echo "self-test rc $?"
grep -c PASS "$OUT/selftest.txt"; grep -v PASS "$OUT/selftest.txt" | head
echo "=== $(date +%T) tinyllama candle vs opbench, batch 1,4,16"
timeout 360 $BIN --weights random --config tinyllama-1.1b --batch 1,4,16 --impl candle,opbench \
  --repeats "${REPEATS:-5}" --opbench-ablation --out "$OUT/llm.json" --quiet > "$OUT/run.txt" 2>&1
echo "rc $?"; cat "$OUT/run.txt"
echo "=== $(date +%T) opbench without PDL, batch 1"
timeout 60 $BIN --weights random --config tinyllama-1.1b --batch 1 --impl opbench --pdl off \
  --repeats 3 --out "$OUT/pdl_off.json" --quiet 2>&1 | grep -E "tinyllama|rror" | tee -a "$OUT/run.txt"
echo "=== $(date +%T) ladder parity (opbench vs candle), batch 1"
timeout 120 $BIN --weights random --config ladder --batch 1 --impl opbench --repeats 2 \
  --out "$OUT/ladder.json" --quiet 2>&1 | grep -E "llama|rror" | tee -a "$OUT/run.txt"
python3 - "$OUT" <<'PY' | tee "$OUT/notes.txt"
import json, sys
o = sys.argv[1]
for f in ["llm.json", "ladder.json"]:
    a = json.load(open(f"{o}/{f}"))
    print(f, "copy_gbps", round(a["ceilings"]["copy_gbps"], 1))
    for r in a["results"]:
        if r["implementation"] == "opbench":
            c = r.get("correctness") or {}
            print(r["params"]["model"], "batch", r["params"]["batch"], r["status"],
                  "parity", c.get("passed"), round(c.get("rel_err", -1), 5))
            for n in r.get("notes", []):
                print("   ", n)
PY
echo "clocks sm/mem, throttle reasons at end: $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks_throttle_reasons.active --format=csv,noheader)" | tee -a "$OUT/env.txt"
echo "=== $(date +%T) done"
