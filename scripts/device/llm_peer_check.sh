#!/usr/bin/env bash
# scripts/device/llm_peer_check.sh: a second, short GPU call that checks the transformers peer's
# harness on TinyLlama-1.1B (random f16, batch 1): our loop with and without the per-step memory
# sample, model.generate() timed by a streamer, torch.profiler over one decode step; and candle
# with and without its memory sample, in the same call. Merged into $OUT/llm_check.json.
#
# Usage (on the GPU machine, from the repo root): OUT=/some/dir bash scripts/device/llm_peer_check.sh DIR
# where DIR holds llm_bench.xz and optionally transformers_llm.py.
set -uo pipefail
DIR=${1:?usage: llm_peer_check.sh DIR_WITH_llm_bench.xz}
OUT=${OUT:?set OUT to an output folder}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
BIN=/tmp/llm_bench
W=/tmp/llm-weights
PEER=$DIR/transformers_llm.py
[ -f "$PEER" ] || PEER=bench/peers/transformers_llm.py
xz -dc "$DIR/llm_bench.xz" > $BIN && chmod +x $BIN || exit 1
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$OUT/env.txt" 2>&1; cat "$OUT/env.txt"
step() { echo "=== $(date +%T) $*"; }
step "candle: tinyllama-1.1b batch 1, memory sampled, weights saved"
timeout 60 $BIN --weights random --config tinyllama-1.1b --batch 1 --save-weights $W \
  --out "$OUT/llm_check.json" --quiet || echo "candle run failed: $?"
step "candle: tinyllama-1.1b batch 1, no memory sample"
timeout 45 $BIN --weights random --config tinyllama-1.1b --batch 1 --mem-sample off \
  --out "$OUT/llm_check_nomem.json" --quiet || echo "candle nomem run failed: $?"
step "peer: our loop, our loop without memory sample, model.generate(); profile of step 64"
PYTHONUNBUFFERED=1 timeout 150 python3 "$PEER" --weights-dir $W --batch 1 --repeats 3 \
  --modes loop,loop-nomem,generate --profile-step 64 --out "$OUT/peer_check_rows.json" \
  || echo "peer failed: $?"
step "merge"
$BIN --out "$OUT/llm_check.json" --merge "$OUT/llm_check_nomem.json" \
  --merge "$OUT/peer_check_rows.json" --parity-dir $W
step "done"
