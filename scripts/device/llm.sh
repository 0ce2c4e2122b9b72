#!/usr/bin/env bash
# scripts/device/llm.sh: the llm_bench GPU run in one call: candle and opbench (TinyLlama-1.1B
# random f16 at batch 1/4/16, the config ladder at batch 1; candle with event tracking on vs off),
# the transformers-eager, torch-cudagraph and (TinyLlama only) torch-compile-cudagraph peers on
# the same saved weights, one candle decode step under ncu, then the merge + parity (every
# implementation's prompt logits against transformers', and opbench's at 32 decode steps on the
# tokens it generated, at batch 1 and 2).
#
# Usage (on the GPU machine, from the repo root): OUT=/some/dir bash scripts/device/llm.sh DIR
# where DIR holds llm_bench.xz (a `cargo build --release --features cuda --bin llm_bench`,
# xz-compressed) and optionally the peers transformers_llm.py and torch_graph_llm.py (else
# bench/peers/ is used).
# Outputs (7 files, what the device tool brings back) land in $OUT: llm.json is the merged
# artifact; the self-test's failing lines, if any, go to stdout.
# SPREAD=N (default 0): after the merge, N more opbench processes at tinyllama-1.1b batch 16,
# one stdout line each (decode tokens/s, % of the bound that process measured): where the
# artifact's single process sits in the spread between processes (docs/notes/decode.md).
set -uo pipefail
DIR=${1:?usage: llm.sh DIR_WITH_llm_bench.xz}
OUT=${OUT:?set OUT to an output folder}
REPEATS=${REPEATS:-5}
SPREAD=${SPREAD:-0}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
BIN=/tmp/llm_bench
W=/tmp/llm-weights
PEER=$DIR/transformers_llm.py
[ -f "$PEER" ] || PEER=bench/peers/transformers_llm.py
GRAPH_PEER=$DIR/torch_graph_llm.py
[ -f "$GRAPH_PEER" ] || GRAPH_PEER=bench/peers/torch_graph_llm.py
xz -dc "$DIR/llm_bench.xz" > $BIN && chmod +x $BIN || exit 1
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv
  python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
  which ncu; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
step() { echo "=== $(date +%T) $*"; }

step "opbench: decode kernels against float64 references"
timeout 120 $BIN --self-test > /tmp/selftest.txt 2>&1; echo "self-test rc $?, $(grep -c PASS /tmp/selftest.txt) checks passed"
grep -v PASS /tmp/selftest.txt | head -20
# Timed points run one process each (llm_parts.sh says why); parts go to $PARTS and are merged
# into llm.json below.
source scripts/device/llm_parts.sh
PARTS=/tmp/llm_parts
rm -rf $PARTS && mkdir -p $PARTS
step "weights and parity logits for the peers (candle's prompt logits, opbench's 32 decode steps at batch 1 and 2)"
# A process of its own: opbench's parity engines would otherwise be allocated before the timed
# ones. Its one-repeat timing rows are not merged.
timeout 200 $BIN --weights random --config ladder --batch 1 --impl candle,opbench --repeats 1 \
  --save-weights $W --out "$PARTS/save.json" --quiet || echo "saving the weights failed: $?"
step "candle's ladder at batch 1; opbench's ladder at batch 1, candle and opbench at batch 4 and 16, one process each"
llm_timed_parts $BIN "$OUT/llm.json" $PARTS/timed "$REPEATS"
step "candle: tinyllama-1.1b batch 1 with cudarc event tracking on (candle's default)"
timeout 60 $BIN --weights random --config tinyllama-1.1b --batch 1 --repeats "$REPEATS" \
  --event-tracking on --out "$OUT/llm_tracking_on.json" --quiet || echo "tracking-on run failed: $?"
step "peer: transformers eager on the same weights"
PYTHONUNBUFFERED=1 timeout 200 python3 "$PEER" --weights-dir $W --batch 1 \
  --batch-for tinyllama-1.1b=1,4,16 --repeats "$REPEATS" --profile-step 64 \
  --out "$OUT/peer_rows.json" || echo "peer failed: $?"
step "peers: torch-cudagraph, and torch-compile-cudagraph on tinyllama-1.1b, on the same weights"
PYTHONUNBUFFERED=1 timeout 300 python3 "$GRAPH_PEER" --weights-dir $W --batch 1 \
  --batch-for tinyllama-1.1b=1,4,16 --repeats "$REPEATS" --compile-configs tinyllama-1.1b \
  --out "$OUT/graph_peer_rows.json" || echo "torch-cudagraph peer failed: $?"
step "ncu: one candle decode step (step 64 of P=128, T=128, batch 1)"
timeout 150 ncu --profile-from-start off --clock-control none --cache-control none \
  --metrics gpu__time_duration.sum --csv --print-units base --log-file "$OUT/ncu_step.csv" \
  $BIN --weights random --config tinyllama-1.1b --batch 1 --repeats 1 --warmup 1 \
  --profile-decode-step 64 --out /tmp/llm_ncu.json --quiet > /tmp/ncu_stdout.txt 2>&1 \
  || { echo "ncu failed: $?"; tail -20 /tmp/ncu_stdout.txt; }
python3 "$PEER" --ncu-csv "$OUT/ncu_step.csv" --out "$OUT/ncu_rows.json" || echo "ncu parse failed"
step "merge"
MERGE=()
for f in "${LLM_PARTS[@]}" "$OUT/llm_tracking_on.json" "$OUT/peer_rows.json" \
  "$OUT/graph_peer_rows.json" "$OUT/ncu_rows.json"; do
  [ -s "$f" ] && MERGE+=(--merge "$f")
done
$BIN --out "$OUT/llm.json" "${MERGE[@]}" --parity-dir $W
if [ "$SPREAD" -gt 0 ]; then
  step "spread: $SPREAD more opbench processes at tinyllama-1.1b batch 16"
  for i in $(seq 1 "$SPREAD"); do
    timeout 90 $BIN --weights random --config tinyllama-1.1b --batch 16 --impl opbench \
      --repeats "$REPEATS" --out "/tmp/llm_spread_$i.json" --quiet > /dev/null 2>&1 \
      || { echo "spread process $i failed: $?"; continue; }
    python3 - "/tmp/llm_spread_$i.json" "$i" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    if r["implementation"] == "opbench" and r["benchmark"] == "generate":
        m = r["metrics"]
        print(f"spread process {sys.argv[2]}: {r['status']}, "
              f"{m.get('decode_tokens_per_s', 0):.0f} tokens/s, "
              f"{m.get('pct_of_bandwidth_bound', 0):.2f}% of the bound")
PY
  done
fi
step "done"
