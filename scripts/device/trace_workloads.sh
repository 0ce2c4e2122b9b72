#!/usr/bin/env bash
# scripts/device/trace_workloads.sh: the workloads `trace` must profile unmodified, traced on one
# GPU in one call, with the agreement and overhead checks (each printing PASS or FAIL):
#   tiny       an nvcc-built binary (scripts/device/trace_tool_tiny.cu)
#   eager      transformers, TinyLlama-1.1B architecture, eager generate with module ranges;
#              kernels in range "steps" against torch.profiler over the same generations (a
#              separate process): count equal, summed time within 1%
#   graphs     the same with torch.compile and CUDA graphs (static cache), same check
#   triton     a Triton kernel script (bench/trace_workloads/triton_softmax.py)
#   llm        llm_bench --impl opbench (CUDA graphs), when $BIN/llm_bench is carried
#   overhead   eager generate traced against untraced, $PAIRS (default 9) alternating rounds
#              (after one discarded round: the first processes on a fresh machine run slower),
#              each process's median ms per token; EAGER_ARGS (default "--runs 3") goes to the
#              generate script: at most 5% slower
#   overhead_graphs  llm_bench's decode step (CUDA graphs) with --graphs graph, as many
#              alternating rounds: at most 2% slower. In both overhead steps the untraced
#              runs' own spread (min-max over median) is printed beside each result: on a host
#              whose untraced runs spread more than the bar, the check says so (UNDECIDED)
#              instead of passing or failing, unless every traced run is slower than every
#              untraced one, or than the untraced run of its own round, by more than the bar
#              (then it fails, and says why). PIN="taskset -c 2-5" runs every process of both
#              overhead steps on the same CPUs (eager decode is bound by the host, whose speed
#              otherwise differs between processes). KINDS_VARIANTS="A B" adds traced runs of
#              variants to each round, to say what costs what: KINDS[@node][+noflush|
#              +flush=thread|period][+api=callback], KINDS the OPBENCH_TRACE_KINDS list or
#              "all"; @node traces graphs node by node (DEVICE@node: CUPTI attached, nothing
#              recorded per launch); +noflush sets OPBENCH_TRACE_FLUSH=off, +flush=X sets it
#              to X, +api=callback sets OPBENCH_TRACE_API_RECORDS=callback (API calls through
#              CUPTI's callback API instead of the activity kinds), +calls=WHICH passes
#              `trace --api WHICH` (none: no runtime or driver API records).
#              PROFILER_REF=1 adds a torch.profiler run of the same generations to each eager
#              round, for reference. Beside the eager figures, each over its process's host
#              control (host_control_ms from the generate script: a CPU loop timed before CUDA
#              starts), to show whether the host's speed is what spreads them.
# The multi-rank job is scripts/device/trace_torchrun.sh (a 2-GPU machine).
#
# Usage (GPU machine, repo root): OUT=DIR BIN=DIR bash scripts/device/trace_workloads.sh
# Set OPBENCH_GIT_COMMIT=<sha> OPBENCH_GIT_DIRTY=0 for the artifacts' run.git_commit, as for
# suite.sh: the GPU machine's copy of .git is the session's first, not the tree it runs.
# BIN holds trace, libopbench_trace_inject.so, trace_tool_tiny and optionally llm_bench
# (docs/notes/trace_tool.md says how to build them). WORKLOADS picks steps (default: all).
# Every output folder is packed into $OUT/trace_workloads.tar.xz (trace.json, trace.sqlite and
# the logs; raw files and timelines left out for size, except where KEEP_TIMELINE=1).
set -uo pipefail
OUT=${OUT:?set OUT to an output folder}
BIN=${BIN:-target/release}
W=${WORK:-/tmp/trace_workloads}
TRACE="$BIN/trace --injection $BIN/libopbench_trace_inject.so"
steps=" ${WORKLOADS:-tiny eager graphs triton llm overhead overhead_graphs} "
want() { [[ "$steps" == *" $1 "* ]]; }
rm -rf "$W"; mkdir -p "$W" "$OUT"
exec > >(tee "$OUT/trace_workloads.log") 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
# The trace_range row of `range` in folder $1's artifact: "kernels kernel_time_us".
range_of() {
  python3 - "$1" "$2" <<'PY'
import json, sys
a = json.load(open(f"{sys.argv[1]}/trace.json"))
for r in a["results"]:
    if r["benchmark"] == "trace_range" and r["params"].get("range") == sys.argv[2]:
        print(r["metrics"]["kernels"], r["metrics"]["kernel_time_us"]); break
else:
    print("none none")
PY
}
# Profiler JSON ($2) against the trace's "steps" range in folder $1.
agree() {
  read -r tk tt < <(range_of "$1" steps)
  read -r pk pt < <(python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print(p['kernels'], p['kernel_time_us'])" "$2")
  echo "$3: trace steps: $tk kernels, $tt us; torch.profiler: $pk kernels, $pt us"
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) == float(sys.argv[2]) else 1)" "$tk" "$pk" 2>/dev/null \
    && pass "$3 kernel count $tk = $pk" || fail "$3 kernel count $tk != $pk"
  python3 -c "import sys; t,p=float(sys.argv[1]),float(sys.argv[2]); d=t/p-1; print(f'time ratio {d*100:+.2f}%'); sys.exit(0 if abs(d)<=0.01 else 1)" "$tt" "$pt" \
    && pass "$3 kernel time within 1%" || fail "$3 kernel time not within 1%"
}
gen=bench/trace_workloads/tinyllama_generate.py

if want tiny; then
  echo "=== $(date +%T) tiny (nvcc-built binary)"
  $TRACE --out "$W/tiny" --name trace_tool_tiny -- "$BIN/trace_tool_tiny" 2>&1 | tail -6
fi
if want eager; then
  echo "=== $(date +%T) eager: transformers generate, module ranges"
  python3 $gen --mode profile --modules > "$W/eager.profiler.json" 2> "$W/eager.profiler.log" || { tail "$W/eager.profiler.log"; fail "eager profile run"; }
  $TRACE --out "$W/eager" --name tinyllama-eager -- python3 $gen --mode run --modules 2>&1 | tail -8
  agree "$W/eager" "$W/eager.profiler.json" eager
fi
if want graphs; then
  echo "=== $(date +%T) graphs: torch.compile + CUDA graphs"
  python3 $gen --mode profile --compile > "$W/graphs.profiler.json" 2> "$W/graphs.profiler.log" || { tail "$W/graphs.profiler.log"; fail "graphs profile run"; }
  $TRACE --out "$W/graphs" --name tinyllama-compile-graphs -- python3 $gen --mode run --compile 2>&1 | tail -8
  agree "$W/graphs" "$W/graphs.profiler.json" graphs
fi
if want triton; then
  echo "=== $(date +%T) triton"
  $TRACE --out "$W/triton" --name triton-softmax -- python3 bench/trace_workloads/triton_softmax.py 2>&1 | tail -6
  read -r tk _ < <(range_of "$W/triton" steps)
  [ "${tk%.0}" = 100 ] && pass "triton: 100 kernels in steps" || fail "triton: $tk kernels in steps, want 100"
fi
llm_args=(--weights random --config tinyllama-1.1b --batch 1 --impl opbench --repeats 3 --quiet)
if want llm && [ -x "$BIN/llm_bench" ]; then
  echo "=== $(date +%T) llm_bench --impl opbench"
  LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} \
    $TRACE --out "$W/llm" --name llm_bench-opbench -- "$BIN/llm_bench" "${llm_args[@]}" --out "$W/llm_point.json" 2>&1 | tail -8
fi
# A variant spec of KINDS_VARIANTS: KINDS[@node][+noflush|+flush=WHICH][+api=SOURCE], KINDS a
# comma-separated list of OPBENCH_TRACE_KINDS or "all"; "@node" traces graphs node by node in
# the graph step; "+noflush" sets OPBENCH_TRACE_FLUSH=off and "+flush=WHICH" sets it to WHICH
# (thread or period: that periodic flush alone); "+api=callback" sets
# OPBENCH_TRACE_API_RECORDS=callback; "+calls=WHICH" is `trace --api WHICH` (variant_flags).
# Prints the environment assignments for `env` (a variable nothing reads,
# OPBENCH_TRACE_VARIANT, where the variant sets none).
variant_env() {
  local k=${1%%+*} e=() part parts=()
  k=${k%@node}
  [ "$k" != all ] && e+=("OPBENCH_TRACE_KINDS=$k")
  [[ "$1" == *+* ]] && IFS=+ read -ra parts <<< "${1#*+}"
  for part in "${parts[@]}"; do
    case "$part" in
      noflush) e+=("OPBENCH_TRACE_FLUSH=off") ;;
      flush=*) e+=("OPBENCH_TRACE_FLUSH=${part#flush=}") ;;
      api=*) e+=("OPBENCH_TRACE_API_RECORDS=${part#api=}") ;;
    esac
  done
  echo "${e[@]:-OPBENCH_TRACE_VARIANT=$1}"
}
# The `trace` flags of a variant spec: --api WHICH for "+calls=WHICH", else none.
variant_flags() {
  local part parts=()
  [[ "$1" == *+* ]] && IFS=+ read -ra parts <<< "${1#*+}"
  for part in "${parts[@]}"; do
    case "$part" in calls=*) echo "--api ${part#calls=}" ;; esac
  done
}
variant_tag() { local t=${1//[,@+=]/_}; echo "${t//__/_}"; }
# Median over a list of per-process figures from files, against the untraced runs' median:
# prints one line per variant; exits nonzero when the default trace misses the bar ($4).
# With "round:I" for the round count ($3): prints round I's figure of every process, as
# progress, so a call cut short still says what it measured.
overhead_report() {
  python3 - "$@" <<'PY'
import glob, json, os, statistics, sys
what, w = sys.argv[1], sys.argv[2]
ext = "out" if what == "eager" else "json"
def figure(path):
    """A process's figure and its host control (None where it has none)."""
    if what == "eager":
        j = json.loads(open(path).read().strip().splitlines()[-1])
        return j["ms_per_token_median"], j.get("host_control_ms")
    a = json.load(open(path))
    return statistics.median(r["stats"]["decode_step_ms"]["p50"] for r in a["results"]
                             if r.get("status") == "ok" and "decode_step_ms" in r.get("stats", {})), None
if sys.argv[3].startswith("round:"):
    i = sys.argv[3][len("round:"):]
    figs = []
    for f in sorted(glob.glob(f"{w}/ov_{what}_*_{i}.{ext}")):
        tag = os.path.basename(f)[len(f"ov_{what}_"):-len(f"_{i}.{ext}")]
        try:
            x, c = figure(f)
            figs.append(f"{tag} {x:.4f}" + (f" (host control {c:.1f} ms)" if c else ""))
        except Exception:
            figs.append(f"{tag} none")
    print(f"{what} round {i}: " + ", ".join(figs))
    sys.exit(0)
n, bar, variants = int(sys.argv[3]), float(sys.argv[4]), sys.argv[5:]
def runs(tag):
    """{round: figure} of the rounds whose process left one."""
    out = {}
    for i in range(1, n + 1):
        try:
            out[i] = figure(f"{w}/ov_{what}_{tag}_{i}.{ext}")
        except Exception as e:
            print(f"{what} {tag} run {i}: no figure ({e})")
    return out
unit = "ms/token" if what == "eager" else "ms/step"
tags = ["untraced", "default"] + variants
by_round = {t: runs(t) for t in tags}
figs = {t: list(by_round[t].values()) for t in tags}
# Printed, not judged: each figure over the process's own host control, a check of whether the
# host's speed (which differs between processes) is what spreads the untraced runs.
normalised = all(c for t in tags for _, c in figs[t])
def judge(key, label):
    u = [key(f) for f in figs["untraced"]]
    if len(u) < 3:
        sys.exit(f"{what}: only {len(u)} untraced runs")
    mu = statistics.median(u)
    spread = (max(u) - min(u)) / mu
    print(f"{what} {label}: untraced {[round(x, 4) for x in u]} median {mu:.4f} (spread {spread*100:.1f}%)")
    ok = None
    for tag in tags[1:]:
        t = [key(f) for f in figs[tag]]
        if not t:
            continue
        mt = statistics.median(t)
        print(f"{what} {label} {tag}: {[round(x, 4) for x in t]} median {mt:.4f}; overhead {(mt/mu-1)*100:+.2f}%")
        if tag == "default":
            ok = len(t) >= 5 and len(u) >= 5 and mt / mu - 1 <= bar
    return ok, spread
if normalised:
    print(f"{what}: host control ms per process: " + "; ".join(
        f"{t} {[round(c, 1) for _, c in figs[t]]}" for t in tags))
    judge(lambda f: f[0] / f[1], f"{unit} per host-control ms")
ok, spread = judge(lambda f: f[0], unit)
u, t = [f[0] for f in figs["untraced"]], [f[0] for f in figs["default"]]
# Each round's traced process over the untraced one of the same round: the host's speed drifts
# over minutes, and the two processes of a round ran next to each other.
ratios = [f[0] / by_round["untraced"][i][0] for i, f in by_round["default"].items() if i in by_round["untraced"]]
if ratios:
    print(f"{what} default over untraced, round by round: {[f'{(r - 1) * 100:+.1f}%' for r in ratios]}; "
          f"median {(statistics.median(ratios) - 1) * 100:+.2f}%")
if spread > bar and t and min(t) / max(u) - 1 > bar:
    print(f"decided despite the spread: every traced process is more than {bar*100:.0f}% slower than every untraced one")
elif spread > bar and len(ratios) >= 5 and min(ratios) - 1 > bar:
    print(f"decided despite the spread: in each of the {len(ratios)} rounds the traced process is more than {bar*100:.0f}% slower than the untraced one")
elif spread > bar:
    print(f"UNDECIDED: the untraced runs alone spread more than the {bar*100:.0f}% bar on this host")
sys.exit(0 if ok else 1)
PY
}
if want overhead; then
  pairs=${PAIRS:-9}
  eager_args=(--mode run ${EAGER_ARGS:---runs 3})
  echo "=== $(date +%T) overhead: eager generate (${eager_args[*]}), $pairs alternating rounds (untraced, traced, ${KINDS_VARIANTS:-no} variants${PROFILER_REF:+, torch.profiler}) after one discarded round"
  for i in $(seq 0 "$pairs"); do
    ${PIN:-} python3 $gen "${eager_args[@]}" > "$W/ov_eager_untraced_$i.out" 2>/dev/null
    ${PIN:-} $TRACE --out "$W/ov_eager_default_t$i" -- python3 $gen "${eager_args[@]}" 2>/dev/null | grep '^{' > "$W/ov_eager_default_$i.out"
    for k in ${KINDS_VARIANTS:-}; do
      tag=$(variant_tag "$k")
      # shellcheck disable=SC2046 # a variant's environment and flags are several words
      env $(variant_env "$k") ${PIN:-} $TRACE $(variant_flags "$k") --out "$W/ov_eager_${tag}_t$i" -- python3 $gen "${eager_args[@]}" 2>/dev/null | grep '^{' > "$W/ov_eager_${tag}_$i.out"
    done
    # torch.profiler's own cost on the same generations, for reference (its timed loop
    # runs under the profiler, with CUDA activities).
    [ -n "${PROFILER_REF:-}" ] && ${PIN:-} python3 $gen --mode profile ${EAGER_ARGS:---runs 3} 2>/dev/null > "$W/ov_eager_torch.profiler_$i.out"
    overhead_report eager "$W" "round:$i" 0
  done
  extra=(); for k in ${KINDS_VARIANTS:-}; do extra+=("$(variant_tag "$k")"); done
  [ -n "${PROFILER_REF:-}" ] && extra+=(torch.profiler)
  overhead_report eager "$W" "$pairs" 0.05 "${extra[@]}" && pass "eager overhead <= 5%" || fail "eager overhead > 5%"
fi
if want overhead_graphs; then
  pairs=${PAIRS:-9}
  if [ -x "$BIN/llm_bench" ]; then
    echo "=== $(date +%T) overhead: llm_bench decode (CUDA graphs), --graphs graph, $pairs alternating rounds after one discarded round"
    export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
    for i in $(seq 0 "$pairs"); do
      ${PIN:-} "$BIN/llm_bench" "${llm_args[@]}" --out "$W/ov_llm_untraced_$i.json" >/dev/null 2>&1
      ${PIN:-} $TRACE --out "$W/ov_llm_default_t$i" --graphs graph -- \
        "$BIN/llm_bench" "${llm_args[@]}" --out "$W/ov_llm_default_$i.json" >/dev/null 2>&1
      for k in ${KINDS_VARIANTS:-}; do
        level=graph; [[ "$k" == *@node* ]] && level=node
        tag=$(variant_tag "$k")
        # shellcheck disable=SC2046 # a variant's environment and flags are several words
        env $(variant_env "$k") ${PIN:-} $TRACE $(variant_flags "$k") --out "$W/ov_llm_${tag}_t$i" --graphs $level -- \
          "$BIN/llm_bench" "${llm_args[@]}" --out "$W/ov_llm_${tag}_$i.json" >/dev/null 2>&1
      done
      overhead_report llm "$W" "round:$i" 0
    done
    extra=(); for k in ${KINDS_VARIANTS:-}; do extra+=("$(variant_tag "$k")"); done
    overhead_report llm "$W" "$pairs" 0.02 "${extra[@]}" && pass "graph-level overhead <= 2%" || fail "graph-level overhead > 2%"
  fi
fi
echo "=== $(date +%T) packing"
( cd "$W" && find . -name '*.raw' -delete; [ "${KEEP_TIMELINE:-0}" = 1 ] || find . -name 'timeline.trace.json' -delete
  find . -maxdepth 1 -name 'ov_*' -type d -exec rm -rf {} + ; tar -cJf "$OUT/trace_workloads.tar.xz" . )
ls -la "$OUT"
echo "=== $(date +%T) done: $fails failed"
exit $fails
