#!/usr/bin/env bash
# scripts/device/trace_tool.sh: checks the `trace` tool and its CUPTI injection library on a GPU
# in one call, each check printing PASS or FAIL:
#   1. tiny (scripts/device/trace_tool_tiny.cu): 115 kernels (15 graph kernels of 5 graph
#      launches), 2 memcpy, 1 memset, 3 NVTX ranges, complete, nothing dropped; SQLite counts
#      agree; its exit code 3 passes through.
#   1b. tiny with --graphs graph: 5 graph executions (what CUPTI does with kernels outside
#      graphs then is printed).
#   2. tiny killed with SIGKILL 4 s into its run: the raw file holds the counted part (the
#      injection library's flush thread wrote it), no end line, and trace reports the process
#      incomplete.
#   3. (with torch) a small transformer, eager, then torch.compile, then torch.compile with
#      CUDA graphs, the same program in both processes (module ranges, the range "steps"): the
#      kernels `trace` counts in "steps" equal torch.profiler's over the same steps (a separate
#      process) and their summed time is within 1%; the counts per kernel name that differ are
#      printed (scripts/device/trace_tool_names.py). The CUDA-graph variant (100 steps) runs both
#      processes a second time in the other order and prints how much each side moved.
#   4. (with torch) torch.profiler started inside a traced process: the profiler records what
#      it records alone (the injection library steps aside), trace keeps what came before and
#      reports the process incomplete from then.
#   5. (with a CUDA build of llm_bench carried as $BIN/llm_bench) llm_bench --impl opbench
#      traced unmodified.
#
# Usage (on the GPU machine, from the repo root): OUT=/some/dir bash scripts/device/trace_tool.sh
# (VARIANTS picks among check 3's eager, compile and graphs; default all three)
# with target/release/trace, target/release/libopbench_trace_inject.so and
# target/release/trace_tool_tiny carried (see docs/notes/trace_tool.md for the builds).
set -uo pipefail
OUT=${OUT:?set OUT to an output folder}
BIN=${BIN:-target/release}
# trace finds libcupti.so.13 in /usr/local/cuda itself (OPBENCH_CUPTI_LIB); the workloads keep
# their own library path (torch loads its bundled CUDA libraries), llm_bench gets cuBLAS's below.
TRACE="$BIN/trace --injection $BIN/libopbench_trace_inject.so"
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version --format=csv
  ls -l /usr/local/cuda/lib64/libcupti.so* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* ; } \
  > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
fails=0
check() { # name, python expression over the SQLite db `c` and artifact `a` (a dict), folder
  if python3 - "$3" "$2" <<'PY'
import json, sqlite3, sys
d, expr = sys.argv[1], sys.argv[2]
c = sqlite3.connect(f"{d}/trace.sqlite")
a = json.load(open(f"{d}/trace.json"))
def q(sql): return c.execute(sql).fetchone()[0]
def row(bench, **params):
    for r in a["results"]:
        if r["benchmark"] == bench and all(r["params"].get(k) == v for k, v in params.items()):
            return r["metrics"]
    raise SystemExit(f"no {bench} row {params}")
ok = eval(expr)
print(("PASS" if ok else "FAIL"), expr)
sys.exit(0 if ok else 1)
PY
  then :; else echo "FAIL: $1"; fails=$((fails + 1)); fi
}

echo "=== $(date +%T) 1. tiny"
$TRACE --out "$OUT/tiny" -- "$BIN/trace_tool_tiny" 3 2>&1 | tee "$OUT/tiny.log"
rc=${PIPESTATUS[0]}
[ "$rc" = 3 ] && echo "PASS exit code 3 passed through" || { echo "FAIL exit code $rc"; fails=$((fails + 1)); }
check kernels "q('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') == 115" "$OUT/tiny"
check graph "q('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL where graphId != 0') == 15" "$OUT/tiny"
check memcpy "q('select count(*) from CUPTI_ACTIVITY_KIND_MEMCPY') == 2" "$OUT/tiny"
check memset "q('select count(*) from CUPTI_ACTIVITY_KIND_MEMSET') == 1" "$OUT/tiny"
check nvtx "q('select count(*) from NVTX_EVENTS') == 3" "$OUT/tiny"
check launches "row('trace_launch')['launched'] == 100 and row('trace_launch')['graph_launches'] == 5" "$OUT/tiny"
check streams "row('trace_range', range='streams')['kernels'] == 100" "$OUT/tiny"
check graph_range "row('trace_range', range='graph')['kernels'] == 15" "$OUT/tiny"
check complete "q('select complete from OPBENCH_TRACE_PROCESS') == 1 and q('select droppedRecords from OPBENCH_TRACE_PROCESS') == 0" "$OUT/tiny"
check join "q('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL k join CUPTI_ACTIVITY_KIND_RUNTIME r on r.correlationId = k.correlationId') == 115" "$OUT/tiny"

echo "=== $(date +%T) 1b. tiny, graph-level tracing"
$TRACE --out "$OUT/tiny_graphs" --graphs graph -- "$BIN/trace_tool_tiny" 2>&1 | tee "$OUT/tiny_graphs.log"
check graph_execs "q('select count(*) from CUPTI_ACTIVITY_KIND_GRAPH_TRACE') == 5" "$OUT/tiny_graphs"
# Kernels outside graphs: 100 if CUPTI keeps kernel records on beside graph-level ones (then
# also no graph node among them), 0 if it refuses them (a W line says so). Printed, not judged.
python3 -c "import sqlite3; c = sqlite3.connect('$OUT/tiny_graphs/trace.sqlite'); print('graph-level: kernels', c.execute('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0], 'of them in graphs', c.execute('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL where graphId != 0').fetchone()[0])"

echo "=== $(date +%T) 2. SIGKILL"
$TRACE --out "$OUT/killed" -- sh -c "$BIN/trace_tool_tiny 0 loop & sleep 4; kill -KILL \$!; wait" \
  2>&1 | tee "$OUT/killed.log"
grep -q "ended without flushing" "$OUT/killed.log" && echo "PASS reported incomplete" || { echo "FAIL not reported incomplete"; fails=$((fails + 1)); }
check killed "q('select complete from OPBENCH_TRACE_PROCESS') == 0 and q('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') >= 115" "$OUT/killed"

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  for variant in ${VARIANTS:-eager compile graphs}; do
    flags=""; [ $variant = compile ] && flags="--compile"; [ $variant = graphs ] && flags="--compile --graphs --steps 100"
    echo "=== $(date +%T) 3. torch $variant"
    python3 scripts/device/trace_tool_torch.py --mode profile $flags > "$OUT/torch_$variant.profiler.json" 2> "$OUT/torch_$variant.profiler.log"
    cat "$OUT/torch_$variant.profiler.json"
    $TRACE --out "$OUT/torch_$variant" --name "torch-$variant" -- python3 scripts/device/trace_tool_torch.py --mode trace $flags 2>&1 | tail -12
    p=$(cat "$OUT/torch_$variant.profiler.json")
    check "torch $variant count" "row('trace_range', range='steps')['kernels'] == $p['kernels']" "$OUT/torch_$variant"
    check "torch $variant time" "abs(row('trace_range', range='steps')['kernel_time_us'] / $p['kernel_time_us'] - 1) <= 0.01" "$OUT/torch_$variant"
    check "torch $variant complete" "q('select complete from OPBENCH_TRACE_PROCESS order by complete limit 1') == 1" "$OUT/torch_$variant"
    python3 scripts/device/trace_tool_names.py "$OUT/torch_$variant/trace.sqlite" "$OUT/torch_$variant.profiler.json"
    if [ $variant = graphs ]; then
      # The same two processes again, in the other order: how much each side's summed kernel
      # time moves from one process to the next, against the 1% the comparison is held to.
      $TRACE --out "$OUT/torch_graphs_2" --name "torch-graphs-2" -- python3 scripts/device/trace_tool_torch.py --mode trace $flags 2>&1 | tail -3
      python3 scripts/device/trace_tool_torch.py --mode profile $flags > "$OUT/torch_graphs_2.profiler.json" 2>/dev/null
      python3 - "$OUT" <<'PY'
import json, sys
o = sys.argv[1]
def tr(d):
    a = json.load(open(f"{o}/{d}/trace.json"))
    return next(r["metrics"]["kernel_time_us"] for r in a["results"] if r["benchmark"] == "trace_range" and r["params"].get("range") == "steps")
p1, p2 = (json.load(open(f"{o}/{f}"))["kernel_time_us"] for f in ("torch_graphs.profiler.json", "torch_graphs_2.profiler.json"))
t1, t2 = tr("torch_graphs"), tr("torch_graphs_2")
print(f"graphs, summed kernel time (us): profiler {p1:.1f}, {p2:.1f} ({(p2/p1-1)*100:+.2f}%); trace {t1:.1f}, {t2:.1f} ({(t2/t1-1)*100:+.2f}%)")
print(f"graphs, trace/profiler: first pair {(t1/p1-1)*100:+.2f}%, second pair {(t2/p2-1)*100:+.2f}%, means {((t1+t2)/(p1+p2)-1)*100:+.2f}%")
PY
    fi
  done
  # 4. The workload starting its own CUPTI subscriber (torch.profiler) inside a traced process.
  echo "=== $(date +%T) 4. torch.profiler inside a traced process"
  $TRACE --out "$OUT/torch_profiler_inside" --name torch-profiler-inside -- \
    python3 scripts/device/trace_tool_torch.py --mode profile > "$OUT/torch_profiler_inside.json" \
    2> "$OUT/torch_profiler_inside.log"
  tail -14 "$OUT/torch_profiler_inside.log"
  inside=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['kernels'])" "$OUT/torch_profiler_inside.json")
  # The eager profile of check 3, run here when VARIANTS left it out.
  [ -s "$OUT/torch_eager.profiler.json" ] || python3 scripts/device/trace_tool_torch.py --mode profile \
    > "$OUT/torch_eager.profiler.json" 2> "$OUT/torch_eager.profiler.log"
  alone=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['kernels'])" "$OUT/torch_eager.profiler.json")
  echo "profiler inside a traced process: $inside kernels; alone: $alone"
  [ "$inside" = "$alone" ] && echo "PASS the profiler inside records what it records alone" || { echo "FAIL profiler inside $inside != alone $alone"; fails=$((fails + 1)); }
  grep -q "incomplete: recording stopped" "$OUT/torch_profiler_inside.log" && echo "PASS reported: recording stopped" || { echo "FAIL no 'recording stopped' report"; fails=$((fails + 1)); }
  # Before the profiler starts: model set-up and 5 warm-up steps of 40 kernels each.
  check "inside: earlier records kept" "q('select complete from OPBENCH_TRACE_PROCESS where lostFrom is not null') == 0 and q('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') >= 200" "$OUT/torch_profiler_inside"
else
  echo "SKIPPED 3 and 4: no torch with CUDA here"
fi
if [ -x "$BIN/llm_bench" ]; then
  # 5. llm_bench --impl opbench (a CUDA build of it carried as $BIN/llm_bench), traced
  # unmodified: its exit code and a non-empty trace.
  echo "=== $(date +%T) 5. llm_bench --impl opbench"
  LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} \
  $TRACE --out "$OUT/llm_opbench" --name llm_bench-opbench -- "$BIN/llm_bench" --weights random \
    --config tinyllama-1.1b --batch 1 --impl opbench --repeats 3 --out "$OUT/llm_point.json" \
    --quiet 2>&1 | tail -14
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] && echo "PASS llm_bench exit 0" || { echo "FAIL llm_bench exit $rc"; fails=$((fails + 1)); }
  check "llm kernels" "q('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') > 1000" "$OUT/llm_opbench"
else
  echo "SKIPPED 5: no $BIN/llm_bench (a --features cuda build) carried"
fi
echo "=== $(date +%T) done: $fails failed"
exit $fails
