#!/usr/bin/env bash
# scripts/device/trace_floor.sh: what tracing costs per kernel in a host-bound launch loop
# (scripts/device/launch_floor.cu), by what is attached: CUPTI alone with each set of activity
# kinds, CUPTI's callback API, and `trace` with its default kinds, with API calls through
# callbacks instead of the activity kinds (OPBENCH_TRACE_API_RECORDS=callback), with no API
# records (--api none), and with kernels only. One process
# per variant per round, variants alternating, ROUNDS rounds (default 5) after a discarded one,
# every process pinned by PIN (default "taskset -c 2-5"). Prints each variant's median
# iteration time and its cost against the untraced loop, in us per kernel and in percent.
#
# Builds (this machine, CUDA env of scripts/cuda-toolchain.sh sourced):
#   nvcc -O2 -arch=sm_90 scripts/device/launch_floor.cu -o target/release/launch_floor
#   nvcc -O2 -arch=sm_90 -DSELF_CUPTI -I"$OPBENCH_NVTX_INCLUDE" scripts/device/launch_floor.cu \
#     -L"$OPBENCH_CUPTI_DIR" -l:libcupti.so.13 \
#     -Xlinker -rpath=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64 \
#     -o target/release/launch_floor_cupti
# Usage (GPU machine): BIN=DIR bash scripts/device/trace_floor.sh, BIN holding launch_floor,
# launch_floor_cupti, trace and libopbench_trace_inject.so. LOOP_ARGS go to every loop
# (default: launch_floor's own, 14 us of host work and 12 queries per kernel).
set -uo pipefail
BIN=${BIN:?set BIN to the folder with launch_floor, launch_floor_cupti, trace and the library}
ROUNDS=${ROUNDS:-5}
PIN=${PIN-taskset -c 2-5}
ARGS=${LOOP_ARGS:-}
W=${WORK:-/tmp/trace_floor}
rm -rf "$W"; mkdir -p "$W"
TRACE="$BIN/trace --injection $BIN/libopbench_trace_inject.so"
names=(untraced cupti:kernel cupti:kernel,runtime cupti:kernel,runtime,driver cb:launch
  cb:domain cupti:kernel+cb:launch trace:default trace:callback trace:none trace:kernels)
run_variant() {  # $1 name, $2 round
  local out="$W/$2.${1//[:,+]/_}"
  case "$1" in
    untraced) $PIN "$BIN/launch_floor" $ARGS ;;
    cupti:kernel+cb:launch) $PIN "$BIN/launch_floor_cupti" --activity kernel --callback launch $ARGS ;;
    cupti:*) $PIN "$BIN/launch_floor_cupti" --activity "${1#cupti:}" $ARGS ;;
    cb:*) $PIN "$BIN/launch_floor_cupti" --callback "${1#cb:}" $ARGS ;;
    trace:default) $PIN $TRACE --out "$out" -- "$BIN/launch_floor" $ARGS 2>"$out.log" ;;
    trace:callback) OPBENCH_TRACE_API_RECORDS=callback \
      $PIN $TRACE --out "$out" -- "$BIN/launch_floor" $ARGS 2>"$out.log" ;;
    trace:none) $PIN $TRACE --api none --out "$out" -- "$BIN/launch_floor" $ARGS 2>"$out.log" ;;
    trace:kernels) OPBENCH_TRACE_KINDS=DEVICE,CONCURRENT_KERNEL \
      $PIN $TRACE --out "$out" -- "$BIN/launch_floor" $ARGS 2>"$out.log" ;;
  esac | grep -o 'iter_us=[0-9.]*' | cut -d= -f2
}
declare -A times
for r in $(seq 0 "$ROUNDS"); do
  for n in "${names[@]}"; do
    t=$(run_variant "$n" "$r")
    [[ -z "$t" ]] && { echo "no figure from $n in round $r"; continue; }
    (( r > 0 )) && times[$n]+="$t "
  done
  echo "round $r done"
done
python3 - "$ROUNDS" "${names[@]}" <<PY
import statistics, sys
names = sys.argv[2:]
raw = {$(for n in "${names[@]}"; do printf '"%s": "%s", ' "$n" "${times[$n]:-}"; done)}
ts = [float(x) for x in raw["untraced"].split()]
if not ts:
    sys.exit("no untraced figure: nothing to compare with")
base = statistics.median(ts)
print(f"untraced: {base:.3f} us per kernel (spread {(max(ts)-min(ts))/base*100:.1f}%)")
for n in names[1:]:
    ts = [float(x) for x in raw[n].split()]
    if not ts:
        print(f"{n}: no figure"); continue
    m = statistics.median(ts)
    print(f"{n}: {m:.3f} us per kernel, {m-base:+.3f} us ({(m/base-1)*100:+.1f}%), runs {' '.join(f'{t:.3f}' for t in ts)}")
PY
# The last round's traces: every kernel joined to the API call that launched it (with
# callbacks, their correlation ids against the kernel records'), and the API records per
# kernel by name, to see which calls each way records.
for v in default callback; do
  db="$W/$ROUNDS.trace_$v/trace.sqlite"
  [ -f "$db" ] && python3 - "$db" "$v" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = lambda s: c.execute(s).fetchall()
k = q("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL")[0][0]
j = q("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL k join CUPTI_ACTIVITY_KIND_RUNTIME r "
      "on r.correlationId = k.correlationId")[0][0]
print(f"trace:{sys.argv[2]}, last round: {j} of {k} kernels joined to their launch call")
for t in ("RUNTIME", "DRIVER"):
    rows = q(f"select s.value, count(*) from CUPTI_ACTIVITY_KIND_{t} a join StringIds s "
             f"on s.id = a.nameId group by s.value order by count(*) desc limit 4")
    n = sum(r[1] for r in q(f"select 1, count(*) from CUPTI_ACTIVITY_KIND_{t}"))
    print(f"  {t.lower()}: {n / max(k, 1):.2f} records per kernel; most: "
          + ", ".join(f"{name} {cnt}" for name, cnt in rows))
PY
done
