#!/usr/bin/env bash
# scripts/device/trace_graph_floor.sh: what tracing costs a CUDA-graph replay
# (scripts/device/graph_floor.cu: one graph of 300 short kernels replayed once a step between
# two small copies, like llm_bench's decode), by what is attached: CUPTI subscribed with nothing
# asked, CUPTI with the DEVICE kind alone, with graph-level records (GRAPH_TRACE), with every
# kind `trace --graphs graph` enables, with node-level kernel records (CONCURRENT_KERNEL); then
# `trace --graphs graph` and `trace --graphs node`. The question it answers: is the 2-4.5% that
# `trace --graphs graph` costs llm_bench's decode (docs/notes/trace_tool.md, fifth and sixth GPU
# runs) the price of CUPTI being attached to a graph replay at all, or of the records asked for?
# One process per variant per round, variants alternating, ROUNDS rounds (default 5) after a
# discarded one, every process pinned by PIN (default "taskset -c 2-5"). Prints each process's
# line as it ends, then each variant's median wall time per step (step_us), GPU time per replay
# between the events around the launch (graph_gpu_us) and from the first kernel's start to the
# last one's end (kernels_us), and their cost against the untraced loop in us and in percent.
#
# cupti:graph,device,kernel,memcpy,memset,runtime,driver,sync is what the injection library
# enables under --graphs graph (trace-inject/src/lib.rs: GRAPH_TRACE first, then DEVICE,
# CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME, DRIVER, SYNCHRONIZATION; CUPTI 13.0 accepted
# CONCURRENT_KERNEL beside GRAPH_TRACE in the first GPU runs and recorded no kernel inside a
# graph). What the library does on top of it, and this variant does not: it turns off the
# records of query calls (this loop makes none), sets CUPTI's flush period and runs a flush
# thread (one flush a second each), and writes the records.
#
# Builds (this machine, CUDA env of scripts/cuda-toolchain.sh sourced; BIN the folder to fill):
#   nvcc -O2 -arch=sm_90 scripts/device/graph_floor.cu -o "$BIN/graph_floor"
#   nvcc -O2 -arch=sm_90 -DSELF_CUPTI -I"$OPBENCH_NVTX_INCLUDE" scripts/device/graph_floor.cu \
#     -L"$OPBENCH_CUPTI_DIR" -l:libcupti.so.13 \
#     -Xlinker -rpath=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64 \
#     -o "$BIN/graph_floor_cupti"
# Usage (GPU machine): BIN=DIR bash scripts/device/trace_graph_floor.sh, BIN holding graph_floor,
# graph_floor_cupti, trace and libopbench_trace_inject.so. LOOP_ARGS go to every loop (default:
# graph_floor's own: 300 kernels of 600 FMAs, 300 warm-up steps, then 5 reps of 300 steps);
# VARIANTS (names as below, space-separated; untraced first) replaces the list.
# Time on an H200: 8 variants x 8 rounds (ROUNDS=7) took 137 s, node-level tracing the longest
# (540,000 kernel records a process). The traces of every round but the last are deleted as the
# round ends (a node-level one holds about 300 MB).
set -uo pipefail
BIN=${BIN:?set BIN to the folder with graph_floor, graph_floor_cupti, trace and the library}
ROUNDS=${ROUNDS:-5}
PIN=${PIN-taskset -c 2-5}
ARGS=${LOOP_ARGS:-}
W=${WORK:-/tmp/trace_graph_floor}
rm -rf "$W"; mkdir -p "$W"
TRACE="$BIN/trace --injection $BIN/libopbench_trace_inject.so"
read -r -a names <<<"${VARIANTS:-untraced cupti:subscribe cupti:device cupti:graph \
cupti:graph,device,kernel,memcpy,memset,runtime,driver,sync cupti:kernel trace:graph trace:node}"
[[ "${names[0]}" == untraced ]] || { echo "VARIANTS must start with untraced"; exit 1; }
run_variant() {  # $1 name, $2 round; prints graph_floor's line
  local out="$W/$2.${1//[:,]/_}"
  case "$1" in
    untraced) $PIN "$BIN/graph_floor" $ARGS ;;
    cupti:subscribe) $PIN "$BIN/graph_floor_cupti" --subscribe $ARGS ;;
    cupti:*) $PIN "$BIN/graph_floor_cupti" --activity "${1#cupti:}" $ARGS ;;
    trace:graph|trace:node)
      $PIN $TRACE --graphs "${1#trace:}" --out "$out" -- "$BIN/graph_floor" $ARGS 2>"$out.log" ;;
    *) echo "unknown variant $1" >&2 ;;
  esac | grep '^step_us='
}
field() { grep -o "\b$1=[0-9.]*" <<<"$2" | cut -d= -f2; }  # $1 name, $2 line
echo "round variant step_us graph_gpu_us kernels_us records" >"$W/results.txt"
for r in $(seq 0 "$ROUNDS"); do
  for n in "${names[@]}"; do
    line=$(run_variant "$n" "$r")
    if [[ -z "$line" ]]; then echo "round $r, $n: no figure"; continue; fi
    echo "round $r, $n: $line$( (( r == 0 )) && echo ' (discarded)')"
    (( r > 0 )) && echo "$r $n $(field step_us "$line") $(field graph_gpu_us "$line")" \
      "$(field kernels_us "$line") $(field records "$line")" >>"$W/results.txt"
  done
  (( r < ROUNDS )) && rm -rf "$W/$r".trace_*/
  echo "round $r done"
done
python3 - "$W/results.txt" "${names[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
names = sys.argv[2:]
by = {n: [r for r in rows if r[1] == n] for n in names}
col = {"step_us": 2, "graph_gpu_us": 3, "kernels_us": 4}
def figures(n, c):
    return [float(r[col[c]]) for r in by[n]]
if not by["untraced"]:
    sys.exit("no untraced figure: nothing to compare with")
base = {c: statistics.median(figures("untraced", c)) for c in col}
ts = figures("untraced", "step_us")
spread = (max(ts) - min(ts)) / base["step_us"] * 100
print(f"untraced: step {base['step_us']:.2f} us (spread {spread:.1f}%), "
      f"graph (events) {base['graph_gpu_us']:.2f} us, kernels {base['kernels_us']:.2f} us, "
      f"steps {' '.join(f'{t:.2f}' for t in ts)}")
for n in names[1:]:
    if not by[n]:
        print(f"{n}: no figure"); continue
    parts = []
    for c, what in (("step_us", "step"), ("graph_gpu_us", "graph (events)"),
                    ("kernels_us", "kernels")):
        m = statistics.median(figures(n, c))
        pct = (m / base[c] - 1) * 100 if base[c] else float("nan")
        parts.append(f"{what} {m:.2f} us, {m-base[c]:+.2f} ({pct:+.2f}%)")
    steps = " ".join(f"{t:.2f}" for t in figures(n, "step_us"))
    print(f"{n}: {'; '.join(parts)}; records {by[n][-1][5]}; steps {steps}")
PY
# The last round's traces: their records by line tag (K kernel, A graph execution, C copy, R
# runtime call, V driver call, Y sync, ...) and the injection library's warnings (W lines).
for v in graph node; do
  d="$W/$ROUNDS.trace_$v/raw"
  compgen -G "$d/trace-*.raw" >/dev/null || continue
  echo "trace:$v, last round, records by tag: $(cut -f1 "$d"/trace-*.raw | sort | uniq -c |
    awk '{print $2 " " $1}' | paste -sd, - | sed 's/,/, /g')"
  grep -h '^W' "$d"/trace-*.raw | cut -c1-200 | sed 's/^/  /'
done
