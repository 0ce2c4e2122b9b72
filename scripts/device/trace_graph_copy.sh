#!/usr/bin/env bash
# scripts/device/trace_graph_copy.sh: does cudagraph trees' input copy (the eager
# multi_tensor_apply_kernel before each replay of scripts/device/trace_tool_torch.py's small
# transformer under torch.compile with CUDA graphs) run longer under torch.profiler, or is it
# only measured longer? Four processes of the same program, each step timed by a CUDA event pair
# (--step-times):
#   plain      no tracer, no profiler: the step time alone
#   profile    steps timed just before torch.profiler starts, then the same steps under it
#   traced     under `trace`: the step time and the trace's own copy-kernel durations
#   both       under `trace`, profile mode: the tracer records until the profiler subscribes
#              (the hand-over), so one process holds the trace's copies before the profiler
#              and Kineto's under it
# If the copy runs longer under the profiler, the step time moves with it; if the step time
# stays, the difference is in how the kernel is measured.
#
# Usage (GPU machine, repo root): OUT=DIR BIN=DIR bash scripts/device/trace_graph_copy.sh
# BIN holds trace and libopbench_trace_inject.so.
set -uo pipefail
OUT=${OUT:?set OUT to an output folder}
BIN=${BIN:-target/release}
TRACE="$BIN/trace --injection $BIN/libopbench_trace_inject.so"
prog=scripts/device/trace_tool_torch.py
flags=(--compile --graphs --steps 100 --step-times)
mkdir -p "$OUT"
echo "=== $(date +%T) plain"
python3 $prog --mode trace "${flags[@]}" 2>/dev/null | tail -1 | tee "$OUT/copy_plain.json"
echo "=== $(date +%T) profile"
python3 $prog --mode profile "${flags[@]}" 2>/dev/null > "$OUT/copy_profile.json"
echo "=== $(date +%T) traced"
$TRACE --out "$OUT/copy_traced" -- python3 $prog --mode trace "${flags[@]}" 2>"$OUT/copy_traced.log" \
  | tail -1 | tee "$OUT/copy_traced.json"
echo "=== $(date +%T) traced, then the profiler in the same process"
$TRACE --out "$OUT/copy_both" -- python3 $prog --mode profile "${flags[@]}" \
  > "$OUT/copy_both.json" 2>"$OUT/copy_both.log"
grep -h "recording stopped\|incomplete" "$OUT/copy_both.log" | head -3
for f in profile both; do
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(sys.argv[2], {k: v for k, v in j.items() if k.startswith('step_us')})" \
    "$OUT/copy_$f.json" "$f"
done
for d in traced both; do
  echo "--- per name: trace $d against torch.profiler ($d)"
  python3 scripts/device/trace_name_times.py "$OUT/copy_$d" "$OUT/copy_${d/traced/profile}.json" | tail -4
done
rm -f "$OUT"/copy_*/*.raw "$OUT"/copy_*/timeline.trace.json
echo "=== $(date +%T) done"
