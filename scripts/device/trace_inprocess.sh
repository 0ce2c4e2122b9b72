#!/usr/bin/env bash
# scripts/device/trace_inprocess.sh: what `trace` costs the eager decode (transformers,
# TinyLlama-1.1B architecture, about 1,000 kernels a token), measured inside one process: the
# generate script's --mode alternate runs untraced and traced generations in pairs (UT, TU,
# ...), pausing recording between them (`trace --start-paused`, bench/trace_control.py: CUPTI
# detached while paused), so the host's speed, which moves between processes by more than the
# bar, is the same for both halves of a pair. Variants, each in its own process, ROUNDS times
# in turn:
#   control   no `trace`: both halves untraced, what the method itself reads as a difference
#   default   `trace --start-paused` (kernels, copies, memsets, syncs, API calls but queries)
#   none      the same with --api none (no runtime or driver API records)
#   kinds:LIST  only the activity kinds LIST (OPBENCH_TRACE_KINDS, e.g.
#             kinds:DEVICE,CONCURRENT_KERNEL for kernels alone; with --api none unless LIST
#             names RUNTIME or DRIVER), to say which kind costs what
#   noflush   default with OPBENCH_TRACE_FLUSH=off (no flush thread, no CUPTI flush period)
#   apiall    default with --api all (query calls recorded too)
#   global    default with OPBENCH_TRACE_PER_THREAD_BUFFERS=0 (CUPTI's global activity
#             buffers instead of per-thread ones)
#   inline    default with OPBENCH_TRACE_DECODE=inline (buffers decoded in CUPTI's completion
#             callback instead of by the library's writer thread)
#   profiler  no `trace`: the recording half inside torch.profiler (CUDA activities), the
#             reference users have now
# Each process prints its pairs' traced-over-untraced percentages; the summary gives each
# variant's median over all its pairs against the 5% bar, and the control's.
#
# Usage (GPU machine, repo root): OUT=DIR BIN=DIR bash scripts/device/trace_inprocess.sh
# BIN holds trace and libopbench_trace_inject.so. PAIRS (default 8) pairs per process, ROUNDS
# (default 2), VARIANTS (default "control default none"), PIN (e.g. "taskset -c 2-5") runs
# every process on the same CPUs, EAGER_ARGS (default "--new-tokens 32") goes to the script.
set -uo pipefail
OUT=${OUT:?set OUT to an output folder}
BIN=${BIN:-target/release}
W=${WORK:-/tmp/trace_inprocess}
PAIRS=${PAIRS:-8}
ROUNDS=${ROUNDS:-2}
VARIANTS=${VARIANTS:-control default none}
PIN=${PIN:-}
EAGER_ARGS=${EAGER_ARGS:---new-tokens 32}
TRACE="$BIN/trace --injection $BIN/libopbench_trace_inject.so --start-paused"
gen=bench/trace_workloads/tinyllama_generate.py
rm -rf "$W"; mkdir -p "$W" "$OUT"
exec > >(tee "$OUT/trace_inprocess.log") 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader
run_args=(--mode alternate --pairs "$PAIRS" $EAGER_ARGS)
for r in $(seq 1 "$ROUNDS"); do
  for v in $VARIANTS; do
    n=${v//[:,]/_}
    j="$W/$n.$r.json"
    traced=1; envs=(); flags=(); extra=()
    case $v in
      control) traced=0 ;;
      profiler) traced=0; extra=(--recorder profiler) ;;
      default) ;;
      none) flags=(--api none) ;;
      apiall) flags=(--api all) ;;
      noflush) envs=(OPBENCH_TRACE_FLUSH=off) ;;
      inline) envs=(OPBENCH_TRACE_DECODE=inline) ;;
      global) envs=(OPBENCH_TRACE_PER_THREAD_BUFFERS=0) ;;
      kinds:*) envs=("OPBENCH_TRACE_KINDS=${v#kinds:}")
        [[ $v == *RUNTIME* || $v == *DRIVER* ]] || flags=(--api none) ;;
      *) echo "unknown variant $v"; exit 2 ;;
    esac
    pre=()
    [ $traced -eq 1 ] && pre=($TRACE "${flags[@]}" --out "$W/$n.$r" --)
    env "${envs[@]}" $PIN "${pre[@]}" python3 $gen "${run_args[@]}" "${extra[@]}" > "$j" 2> "$W/$n.$r.err"
    rc=$?
    grep -h "^trace: " "$W/$n.$r.err" | grep -v "^trace: wrote\|own libcupti\|paused .* time" | head -4
    [ $rc -eq 0 ] || { echo "$v round $r failed (rc $rc):"; tail -5 "$W/$n.$r.err"; }
    python3 - "$j" "$v" "$r" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[2]} round {sys.argv[3]}: no figures ({e})"); sys.exit()
pct = " ".join(f"{p:+.1f}" for p in d["pair_pct"])
print(f"{sys.argv[2]} round {sys.argv[3]} (traced={d['traced']}): untraced median "
      f"{d['untraced_ms_per_token_median']:.2f} ms/token, traced {d['traced_ms_per_token_median']:.2f}; "
      f"pairs {pct}; median {d['pair_pct_median']:+.2f}%")
PY
  done
done
python3 - "$W" "$ROUNDS" $VARIANTS <<'PY'
import json, statistics, sys
from pathlib import Path
w, rounds, variants = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
pairs = {}
for v in variants:
    for r in range(1, rounds + 1):
        try:
            n = v.replace(":", "_").replace(",", "_")
            pairs.setdefault(v, []).extend(json.loads((w / f"{n}.{r}.json").read_text())["pair_pct"])
        except Exception:
            pass
for v, p in pairs.items():
    if not p:
        continue
    m = statistics.median(p)
    line = f"{v}: median of {len(p)} pairs {m:+.2f}% (pairs {min(p):+.1f} to {max(p):+.1f})"
    if v == "profiler":
        print(f"{line}: torch.profiler, for reference")
    elif v == "control":
        print(f"{line}: what the method reads with nothing traced")
    else:
        print(("PASS " if m <= 5.0 else "FAIL ") + line + " against the 5% bar")
PY
tar -C "$W" -cJf "$OUT/trace_inprocess.tar.xz" --exclude='*/raw' --exclude='*timeline*' . 2>/dev/null
