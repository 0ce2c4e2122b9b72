#!/usr/bin/env bash
# scripts/device/trace_graph_copy.sh: does cudagraph trees' input copy (the eager
# multi_tensor_apply_kernel before each replay of scripts/device/trace_tool_torch.py's small
# transformer under torch.compile with CUDA graphs) run longer under torch.profiler, or is it
# only measured longer? Four processes of the same program, each step timed by a CUDA event pair
# (--step-times; host-bound on a fast GPU, so printed but not the answer):
#   plain      no tracer, no profiler: the step time alone
#   profile    steps timed just before torch.profiler starts, then the same steps under it
#   traced     under `trace`: the step time and the trace's own copy-kernel durations
#   both       under `trace`, profile mode: the tracer records until the profiler subscribes
#              (the hand-over), so one process holds the trace's copies before the profiler
#              and Kineto's under it
# Then scripts/device/trace_copy_kernel.py: the same copy kernel alone, back to back behind a
# sleep kernel, timed by CUDA events before, under and after a profiler started inside the
# process (plain), and under `trace` from the start (traced_copies): whether the kernel runs
# longer under the profiler or is only measured longer.
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
python3 - "$OUT" <<'PY'
import json, sys
o = sys.argv[1]
a = json.load(open(f"{o}/copy_traced/trace.json"))
t = next(r["metrics"] for r in a["results"] if r["benchmark"] == "trace_range" and r["params"].get("range") == "steps")
for f in ("profile", "both"):
    p = json.load(open(f"{o}/copy_{f}.json"))
    print(f"trace steps {t['kernels']} kernels {t['kernel_time_us']:.1f} us; torch.profiler ({f}) "
          f"{p['kernels']} kernels {p['kernel_time_us']:.1f} us: {(t['kernel_time_us'] / p['kernel_time_us'] - 1) * 100:+.2f}%")
PY
for d in traced both; do
  echo "--- per name: trace $d against torch.profiler ($d)"
  python3 scripts/device/trace_name_times.py "$OUT/copy_$d" "$OUT/copy_${d/traced/profile}.json" | tail -4
done
echo "=== $(date +%T) the copy kernel alone"
python3 scripts/device/trace_copy_kernel.py 2>/dev/null | tee "$OUT/copy_kernel_plain.json"
$TRACE --out "$OUT/copy_kernel_traced" -- python3 scripts/device/trace_copy_kernel.py --no-profiler \
  2>"$OUT/copy_kernel_traced.log" | tee "$OUT/copy_kernel_traced.json"
python3 - "$OUT/copy_kernel_traced/trace.sqlite" <<'PY'
import sqlite3, statistics, sys
c = sqlite3.connect(sys.argv[1])
d = sorted(r[0] / 1e3 for r in c.execute(
    "SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName "
    "WHERE s.value LIKE '%multi_tensor_apply_kernel%'"))
print(f"traced copies: {len(d)} kernels, min/median/max {d[0]:.3f}/{statistics.median(d):.3f}/{d[-1]:.3f} us")
PY
rm -rf "$OUT"/copy_*/raw "$OUT"/copy_*/timeline.trace.json
echo "=== $(date +%T) done"
