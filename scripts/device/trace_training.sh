#!/usr/bin/env bash
# scripts/device/trace_training.sh: an eager PyTorch training step (bench/trace_workloads/
# train_step.py: a small GPT, AdamW, module ranges forward and backward) traced on one GPU,
# with torch.profiler over the same timed steps in a separate process, and the checks of
# scripts/device/trace_training_checks.py (count, backward, modules, overhead: PASS or FAIL).
# `trace` runs with --start-paused (the script records only its timed steps) and --overhead
# $PAIRS (default 3): untraced and traced runs alternately, the last traced one kept.
#
# Usage (GPU machine, repo root): OUT=DIR BIN=DIR bash scripts/device/trace_training.sh
# BIN holds trace and libopbench_trace_inject.so, or trace.xz and libopbench_trace_inject.so.xz
# (unpacked into /tmp). Set OPBENCH_GIT_COMMIT=<sha> OPBENCH_GIT_DIRTY=0 for the artifact's
# run.git_commit. TRAIN_ARGS go to train_step.py (default: its defaults). Writes
# $OUT/train-step-gpt/ (trace.json, trace.sqlite, timeline.trace.json, checks.json) and
# $OUT/trace_training.log.
set -uo pipefail
OUT=${OUT:?set OUT to an output folder}
BIN=${BIN:-target/release}
PAIRS=${PAIRS:-3}
W=/tmp/trace_training
rm -rf "$W"; mkdir -p "$W" "$OUT"
exec > >(tee "$OUT/trace_training.log") 2>&1
for f in trace libopbench_trace_inject.so; do
    if [ -f "$BIN/$f.xz" ]; then
        xz -dc "$BIN/$f.xz" > "$W/$f" && chmod +x "$W/$f"
    else
        cp "$BIN/$f" "$W/$f"
    fi
done
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# shellcheck disable=SC2086
python3 bench/trace_workloads/train_step.py ${TRAIN_ARGS:-} --profile "$W/profile.json" \
    > "$W/profile.log" 2>&1 || { cat "$W/profile.log"; echo "FAIL profile run"; exit 1; }
echo "torch.profiler: $(cat "$W/profile.json")"
# shellcheck disable=SC2086
"$W/trace" --injection "$W/libopbench_trace_inject.so" --start-paused --overhead "$PAIRS" \
    --name train-step-gpt --out "$W/train-step-gpt" -- \
    python3 bench/trace_workloads/train_step.py ${TRAIN_ARGS:-} 2>&1 | tee "$W/trace.log"
python3 scripts/device/trace_training_checks.py "$W/train-step-gpt" "$W/profile.json" "$W/trace.log"
fails=$?
mkdir -p "$OUT/train-step-gpt"
cp "$W"/train-step-gpt/{trace.json,trace.sqlite,timeline.trace.json,checks.json} "$W/profile.json" \
    "$W/trace.log" "$OUT/train-step-gpt/" 2>/dev/null
echo "trace_training: $fails check(s) failed"
exit "$fails"
