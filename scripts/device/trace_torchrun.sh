#!/usr/bin/env bash
# scripts/device/trace_torchrun.sh: `trace` on a multi-rank job, on a machine of 2 or more GPUs:
# torchrun starts one process per GPU (bench/trace_workloads/allreduce.py: a matrix product and
# NCCL all-reduces per step), traced unmodified. Checks (PASS/FAIL): one traced process per
# rank, each with kernels on its own GPU; NCCL kernels classed as communication in every rank;
# a communication/computation breakdown per rank; one timeline holding every rank.
#
# Usage (GPU machine, repo root): OUT=DIR BIN=DIR NPROC=2 bash scripts/device/trace_torchrun.sh
# Set OPBENCH_GIT_COMMIT=<sha> OPBENCH_GIT_DIRTY=0 for the artifacts' run.git_commit, as for
# suite.sh: the GPU machine's copy of .git is the session's first, not the tree it runs.
# BIN holds trace and libopbench_trace_inject.so. Outputs packed into $OUT/trace_torchrun.tar.xz.
set -uo pipefail
OUT=${OUT:?set OUT to an output folder}
BIN=${BIN:-target/release}
NPROC=${NPROC:-2}
W=${WORK:-/tmp/trace_torchrun}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
rm -rf "$W"; mkdir -p "$W" "$OUT"
exec > >(tee "$OUT/trace_torchrun.log") 2>&1
nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader
echo "=== $(date +%T) torchrun --nproc_per_node=$NPROC, traced"
"$BIN/trace" --injection "$BIN/libopbench_trace_inject.so" --out "$W/torchrun" --name "torchrun-allreduce-${NPROC}gpu" -- \
  torchrun --standalone --nproc_per_node="$NPROC" bench/trace_workloads/allreduce.py 2>&1 | tail -25
rc=${PIPESTATUS[0]}
python3 - "$W/torchrun" "$NPROC" "$rc" <<'PY'
import json, sqlite3, sys
d, n, rc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a = json.load(open(f"{d}/trace.json"))
c = sqlite3.connect(f"{d}/trace.sqlite")
fails = 0
def check(ok, what):
    global fails
    print(("PASS " if ok else "FAIL ") + what)
    fails += not ok
check(rc == 0, f"torchrun exit status {rc}")
procs = [r for r in a["results"] if r["benchmark"] == "trace_process" and r["metrics"]["kernels"] > 0]
check(len(procs) == n, f"{len(procs)} traced processes with kernels, want {n} (one per rank)")
devs = c.execute("select globalPid, count(distinct deviceId), min(deviceId) from CUPTI_ACTIVITY_KIND_KERNEL group by globalPid").fetchall()
print("kernels per process: (globalPid, devices, device):", devs)
check(len(devs) == n and sorted(d[2] for d in devs) == list(range(n)) and all(d[1] == 1 for d in devs),
      "each rank's kernels on its own GPU")
nccl = c.execute("select count(*), count(distinct k.globalPid) from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.shortName where s.value like '%nccl%'").fetchone()
check(nccl[0] > 0 and nccl[1] == n, f"NCCL kernels in every rank: {nccl[0]} in {nccl[1]} processes")
temporal = [r for r in a["results"] if r["benchmark"] == "trace_temporal"]
for r in temporal:
    m = r["metrics"]
    print(f"rank process {r['params'].get('process')} device {r['params'].get('device')}: compute {m['compute_pct']:.1f}% communication {m['communication_pct']:.1f}% memory {m['memory_pct']:.1f}% idle {m['idle_pct']:.1f}% overlap {m.get('communication_overlap_pct')}")
check(len(temporal) >= n and all(r["metrics"]["communication_us"] > 0 for r in temporal),
      "communication time in every rank's breakdown")
tl = json.load(open(f"{d}/timeline.trace.json"))
events = tl["traceEvents"] if isinstance(tl, dict) else tl
pids = {e.get("pid") for e in events if e.get("ph") == "X"}
check(len(pids) >= n, f"one timeline with {len(pids)} processes")
sys.exit(fails)
PY
fails=$?
( cd "$W" && find . -name '*.raw' -delete; tar -cJf "$OUT/trace_torchrun.tar.xz" . )
ls -la "$OUT"
echo "=== $(date +%T) done: $fails failed"
exit $fails
