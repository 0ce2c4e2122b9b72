#!/usr/bin/env bash
# scripts/device/trace_inprocess.sh: what `trace` costs the eager decode (transformers,
# TinyLlama-1.1B architecture, about 1,000 kernels a token), measured inside one process: the
# generate script's --mode alternate runs untraced and traced generations in pairs (UT, TU,
# ...), pausing recording between them (`trace --start-paused`, python/opbench/trace_control.py: CUPTI
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
#   cuptitid  default with OPBENCH_TRACE_THREAD_IDS=cupti (CUPTI's default thread ids in API
#             records instead of system ones)
#   program   default, but the library loaded and started by the program once CUDA is up
#             (--attach program, python/opbench/trace_control.py), not by the driver's injection
#   nonvtx    default without NVTX's injection (NVTX_INJECTION64_PATH unset under `trace`)
#   nopreload default without the library preloaded (LD_PRELOAD unset under `trace`: the
#             driver's injection alone loads it, and no hand-over to torch.profiler is possible)
#   inline    default with OPBENCH_TRACE_DECODE=inline (buffers decoded in CUPTI's completion
#             callback instead of by the library's writer thread)
#   profiler  no `trace`: the recording half inside torch.profiler (CUDA activities), the
#             reference users have now
#   profiler-teardown  the same with TEARDOWN_CUPTI=1, with which torch.profiler detaches
#             CUPTI when it stops, so the untraced half runs untraced as it does under `trace`
# Variants join with "+" to combine their settings (e.g. global+noflush+cuptitid).
# Each process prints its pairs' traced-over-untraced percentages; both halves against BEFORE
# (default 0: none) untraced generations timed before the recorder was first used (a recorder that
# leaves a cost behind after its first use slows the untraced half too, which the pairs alone
# cannot see: torch.profiler leaves CUPTI attached when it stops, unless TEARDOWN_CUPTI=1); and
# the CPU time per token of the launching thread and of the whole process in each half; how long
# the synchronizations after each half took (outside the timing: where Kineto's teardown
# detaches CUPTI, tinyllama_generate.py --settle-s). The
# summary gives each variant's median over all its pairs against the 5% bar, the control's,
# and the medians over the never-recorded baseline.
#
# Usage (GPU machine, repo root): OUT=DIR BIN=DIR bash scripts/device/trace_inprocess.sh
# BIN holds trace and libopbench_trace_inject.so. PAIRS (default 8) pairs per process, ROUNDS
# (default 2), VARIANTS (default "control default none"), PIN (e.g. "taskset -c 2-5") runs
# every process on the same CPUs, EAGER_ARGS (default "--new-tokens 32") goes to the script,
# PROC_TIMEOUT (default 150) seconds end a process that hangs, so the others still run.
set -uo pipefail
OUT=${OUT:?set OUT to an output folder}
BIN=${BIN:-target/release}
W=${WORK:-/tmp/trace_inprocess}
PAIRS=${PAIRS:-8}
BEFORE=${BEFORE:-0}
ROUNDS=${ROUNDS:-2}
VARIANTS=${VARIANTS:-control default none}
PIN=${PIN:-}
EAGER_ARGS=${EAGER_ARGS:---new-tokens 32}
PROC_TIMEOUT=${PROC_TIMEOUT:-150}
TRACE="$BIN/trace --injection $BIN/libopbench_trace_inject.so --start-paused"
gen=bench/trace_workloads/tinyllama_generate.py
rm -rf "$W"; mkdir -p "$W" "$OUT"
exec > >(tee "$OUT/trace_inprocess.log") 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader
run_args=(--mode alternate --pairs "$PAIRS" --before "$BEFORE" $EAGER_ARGS)
for r in $(seq 1 "$ROUNDS"); do
  for v in $VARIANTS; do
    n=${v//[:,+]/_}
    j="$W/$n.$r.json"
    traced=1; envs=(); flags=(); extra=(); post=()
    # A variant may join several with "+" (e.g. global+noflush+cuptitid): their settings add up.
    IFS=+ read -r -a parts <<< "$v"
    for part in "${parts[@]}"; do
      case $part in
        control) traced=0 ;;
        profiler) traced=0; extra+=(--recorder profiler) ;;
        profiler-teardown) traced=0; extra+=(--recorder profiler); envs+=(TEARDOWN_CUPTI=1) ;;
        default) ;;
        none) flags+=(--api none) ;;
        apiall) flags+=(--api all) ;;
        noflush) envs+=(OPBENCH_TRACE_FLUSH=off) ;;
        inline) envs+=(OPBENCH_TRACE_DECODE=inline) ;;
        global) envs+=(OPBENCH_TRACE_PER_THREAD_BUFFERS=0) ;;
        cuptitid) envs+=(OPBENCH_TRACE_THREAD_IDS=cupti) ;;
        program) extra+=(--attach program) ;;
        nonvtx) post+=(env -u NVTX_INJECTION64_PATH) ;;
        nopreload) post+=(env -u LD_PRELOAD) ;;
        kinds:*) envs+=("OPBENCH_TRACE_KINDS=${part#kinds:}")
          [[ $part == *RUNTIME* || $part == *DRIVER* ]] || flags+=(--api none) ;;
        *) echo "unknown variant $part (in $v)"; exit 2 ;;
      esac
    done
    pre=()
    [ $traced -eq 1 ] && pre=($TRACE "${flags[@]}" --out "$W/$n.$r" --)
    t0=$SECONDS
    timeout -k 10 "$PROC_TIMEOUT" env "${envs[@]}" $PIN "${pre[@]}" "${post[@]}" python3 $gen "${run_args[@]}" "${extra[@]}" > "$j" 2> "$W/$n.$r.err"
    rc=$?
    echo "$v round $r: rc $rc after $((SECONDS - t0)) s"
    grep -h "^trace: " "$W/$n.$r.err" | grep -v "^trace: wrote\|own libcupti\|paused .* time" | head -4
    [ $rc -eq 124 ] && echo "$v round $r: ended by PROC_TIMEOUT=$PROC_TIMEOUT s"
    [ $rc -eq 0 ] || { echo "$v round $r failed (rc $rc):"; tail -5 "$W/$n.$r.err"; }
    python3 - "$j" "$v" "$r" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[2]} round {sys.argv[3]}: no figures ({e})"); sys.exit()
pct = " ".join(f"{p:+.1f}" for p in d["pair_pct"])
before = ""
if "before_ms_per_token_median" in d:
    before = (f"; never-recorded baseline {d['before_ms_per_token_median']:.2f} ms/token: untraced "
              f"{d['untraced_over_before_pct']:+.1f}%, traced {d['traced_over_before_pct']:+.1f}% over it")
cpu = ""
if "traced_thread_cpu_ms_per_token_median" in d:
    cpu = (f"; CPU ms/token untraced -> traced: launching thread "
           f"{d['untraced_thread_cpu_ms_per_token_median']:.2f} -> {d['traced_thread_cpu_ms_per_token_median']:.2f}, "
           f"process {d['untraced_process_cpu_ms_per_token_median']:.2f} -> {d['traced_process_cpu_ms_per_token_median']:.2f}")
if "settle_ms_after_traced_median" in d:
    cpu += (f"; synchronizing after each half (outside the timing) took "
            f"{d['settle_ms_after_untraced_median']:.2f} ms after untraced, "
            f"{d['settle_ms_after_traced_median']:.2f} after traced")
print(f"{sys.argv[2]} round {sys.argv[3]} (traced={d['traced']}): untraced median "
      f"{d['untraced_ms_per_token_median']:.2f} ms/token, traced {d['traced_ms_per_token_median']:.2f}; "
      f"pairs {pct}; median {d['pair_pct_median']:+.2f}%{before}{cpu}")
PY
  done
done
python3 - "$W" "$ROUNDS" $VARIANTS <<'PY'
import json, statistics, sys
from pathlib import Path
w, rounds, variants = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
pairs, over_before = {}, {}
for v in variants:
    for r in range(1, rounds + 1):
        try:
            n = v.replace(":", "_").replace(",", "_").replace("+", "_")
            d = json.loads((w / f"{n}.{r}.json").read_text())
        except Exception:
            continue
        pairs.setdefault(v, []).extend(d["pair_pct"])
        if "traced_over_before_pct" in d:
            over_before.setdefault(v, []).append((d["untraced_over_before_pct"], d["traced_over_before_pct"]))
for v, p in pairs.items():
    if not p:
        continue
    m = statistics.median(p)
    line = f"{v}: median of {len(p)} pairs {m:+.2f}% (pairs {min(p):+.1f} to {max(p):+.1f})"
    if v in over_before:
        u = statistics.median(x[0] for x in over_before[v])
        t = statistics.median(x[1] for x in over_before[v])
        line += (f"; over the never-recorded baseline (median of {len(over_before[v])} processes): "
                 f"untraced half {u:+.1f}%, traced half {t:+.1f}%")
    if v.startswith("profiler"):
        print(f"{line}: torch.profiler, for reference")
    elif v == "control":
        print(f"{line}: what the method reads with nothing traced")
    else:
        print(("PASS " if m <= 5.0 else "FAIL ") + line + " against the 5% bar")
PY
tar -C "$W" -cJf "$OUT/trace_inprocess.tar.xz" --exclude='*/raw' --exclude='*timeline*' . 2>/dev/null
