#!/usr/bin/env bash
# scripts/device/comm.sh: comm_bench on a machine of 2 or more GPUs in one call. For each rank
# count of NPROCS (default: 2, and every GPU of the machine when it has more): comm_bench under
# torchrun (one process per GPU; NCCL through cudarc; the peer-copy and 8-byte all-reduce
# ceilings; every point checked before it is timed) -> $OUT/comm-<N>gpu.json, then the
# torch.distributed peer at the same points (bench/peers/comm_peers.py under torchrun), merged
# into that artifact. NVLink multicast stays off (NCCL_NVLS_ENABLE=0). Files in $OUT: comm.log,
# and per rank count its artifact comm-<N>gpu.json, comm_bench's whole output comm-<N>gpu.txt and
# comm-ours-<N>gpu.json (7 with two rank counts; the device tool returns 8 at most).
#
# Build here (see docs/notes/comm.md):
#   source ~/.cache/opbench/cuda-13.0/env.sh
#   CARGO_TARGET_DIR=/work/main/target cargo build --release --features cuda --bin comm_bench
#   d=.device-bin/comm; mkdir -p $d
#   xz -T2 -6 -c /work/main/target/release/comm_bench > $d/comm_bench.xz
# Run there, from the repository root (carry .device-bin/comm):
#   OPBENCH_GIT_COMMIT=<sha> OPBENCH_GIT_DIRTY=0 bash scripts/device/comm.sh .device-bin/comm
# Then, per rank count, our one-shot all-reduce beside NCCL up to OURS_MAX_BYTES (256K) in a run
# of its own (comm-ours-<N>gpu.json), so a hang there (it spins on flags in peer memory) cannot
# cost the NCCL artifact. The peer script is taken from beside this script when it was carried
# there, else from bench/peers/.
# Knobs: NPROCS="4 2", MAX_BYTES (default 1G: 256 MiB and above is what the torch comparison
# needs, and 4G would triple the call), COMM_ARGS (comm_bench flags; default
# --point-budget-ms 150), PEERS=0 skips torch, SWEEP=0 skips the NCCL sweep and torch (ours
# only), OURS=0 skips ours, OURS_KERNELS="push oneshot twoshot pull" times several of our
# kernels in that run (default: push, implementation "opbench"; comm_bench --help has each);
# OURS_MIN_BYTES (default 8) starts that run's sizes elsewhere, e.g. 6 for sizes 6 * 2^k, whose
# f32 and bf16 messages end in a part-filled 8-byte unit or hold an odd number of units.
# COMM_ARGS="--point-budget-ms 150 --nccl-in-place" adds NCCL's in-place all-reduce
# ("nccl-inplace"), the call torch.distributed.all_reduce makes, beside the out-of-place rows.
# PEER_UNALIGNED=1 times the torch peer a second time at 256 MiB and more with --no-align (its
# samples start without the 8-byte all-reduce that lines the ranks up), and comm_bar.py (carried
# beside this script) prints both beside NCCL.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: comm.sh DIR_WITH_comm_bench.xz}
OUT=${OUT:?set OUT to an output folder}
mkdir -p "$OUT"
exec > >(tee "$OUT/comm.log") 2>&1
step() { echo "=== $(date +%T) $*"; }
export NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# libnccl.so.2 from PyTorch's nvidia-nccl-cu13 wheel: comm_bench links it, torch uses it too.
# nvidia/nccl/lib in the wheels so far; any nvidia/**/libnccl.so.2 otherwise (the CUDA 13 wheels
# of other libraries moved to nvidia/cu13/lib).
nccl_lib=$(python3 - <<'PY'
import glob, os
try:
    import nvidia.nccl
    cands = [os.path.join(p, "lib") for p in nvidia.nccl.__path__]
except ImportError:
    cands = []
import nvidia
cands += sorted({os.path.dirname(f) for p in nvidia.__path__
                 for f in glob.glob(os.path.join(p, "**", "libnccl.so.2"), recursive=True)})
print(next((c for c in cands if os.path.isfile(os.path.join(c, "libnccl.so.2"))), ""))
PY
)
[ -n "$nccl_lib" ] || { echo "no libnccl.so.2 under Python's nvidia packages (nvidia-nccl-cu13, installed with torch)"; exit 1; }
echo "libnccl.so.2 from $nccl_lib"
export LD_LIBRARY_PATH="$nccl_lib:$LD_LIBRARY_PATH"
bin=/tmp/opbench-comm/comm_bench
mkdir -p "$(dirname "$bin")"
xz -dc "$dir/comm_bench.xz" > "$bin" && chmod +x "$bin" || { echo "cannot unpack $dir/comm_bench.xz"; exit 1; }
ngpu=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader
nvidia-smi topo -m
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
if [ "$ngpu" -lt 2 ]; then
    step "one GPU: comm_bench must refuse (rc != 0, nothing written)"
    RANK=0 WORLD_SIZE=1 "$bin" --out "$OUT/comm-1gpu.json"; echo "rc=$? (want 1)"; ls "$OUT"
    exit 1
fi
default_nprocs=2; [ "$ngpu" -gt 2 ] && default_nprocs="$ngpu 2"  # the larger first
status=0
for n in ${NPROCS:-$default_nprocs}; do
    art="$OUT/comm-${n}gpu.json"
    visible=$(seq -s, 0 $((n - 1)))
    if [ "${SWEEP:-1}" = 0 ]; then
        step "no NCCL sweep on $n GPUs (SWEEP=0)"
    else
        step "comm_bench on $n GPUs ($visible) under torchrun"
        # shellcheck disable=SC2086 # COMM_ARGS holds several flags
        CUDA_VISIBLE_DEVICES=$visible timeout 170 torchrun --standalone --nproc-per-node "$n" --no-python \
            "$bin" --max-bytes "${MAX_BYTES:-1G}" --out "$art" ${COMM_ARGS:---point-budget-ms 150} > "$OUT/comm-${n}gpu.txt" 2>&1
        rc=$?; echo "comm_bench rc=$rc (whole output: comm-${n}gpu.txt)"; [ "$rc" = 0 ] || status=1
        grep -E "error|caused by|failed|ceiling|latency|wrote" "$OUT/comm-${n}gpu.txt" | head -30
        grep -E "(all_reduce|all_gather) (f32|bf16) (8 B|256 KiB|256 MiB|1 GiB) " "$OUT/comm-${n}gpu.txt" | head -16
        if [ "${PEERS:-1}" != 0 ] && [ -s "$art" ]; then
            step "torch.distributed peer on $n GPUs at the same points"
            rm -f /tmp/comm_peers.json
            peer=$here/comm_peers.py; [ -f "$peer" ] || peer=bench/peers/comm_peers.py
            # all_reduce and all_gather, the two the comparison is about; torch is host-bound below
            # about 1 MiB, so each of its samples waits out a long stream hold: 50 samples at most.
            CUDA_VISIBLE_DEVICES=$visible PYTHONUNBUFFERED=1 timeout 150 torchrun --standalone --nproc-per-node "$n" \
                "$peer" --plan "$art" --out /tmp/comm_peers.json --collective all_reduce,all_gather \
                --max-samples 50 2>&1 | tail -4
            echo "peer rc=${PIPESTATUS[0]}"
            # The peer file is rewritten after each point, so a timeout still merges what it finished.
            if [ -s /tmp/comm_peers.json ]; then
                "$bin" --merge /tmp/comm_peers.json --out "$art" | grep -E "all_reduce (f32|bf16) (268435456|1073741824) " ; echo "merge rc=${PIPESTATUS[0]}"
            fi
            unaligned=""
            if [ "${PEER_UNALIGNED:-0}" = 1 ]; then
                step "torch peer again at 256 MiB and more without the 8-byte all-reduce that lines the ranks up"
                unaligned=/tmp/comm_peers_unaligned.json; rm -f "$unaligned"
                CUDA_VISIBLE_DEVICES=$visible PYTHONUNBUFFERED=1 timeout 120 torchrun --standalone --nproc-per-node "$n" \
                    "$peer" --plan "$art" --out "$unaligned" --collective all_reduce,all_gather \
                    --max-samples 50 --min-bytes 268435456 --no-align 2>&1 | tail -2
                echo "unaligned peer rc=${PIPESTATUS[0]}"
            fi
            [ -s "$art" ] && python3 "$here/comm_bar.py" "$art" $unaligned
        fi
    fi
    if [ "${NCCL_DIAG:-0}" = 1 ]; then
        step "NCCL's choices for one 256 MiB f32 all-reduce: comm_bench, then torch (NCCL_DEBUG=INFO)"
        diag=/tmp/comm-diag-$n.json
        NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV CUDA_VISIBLE_DEVICES=$visible timeout 60 torchrun --standalone \
            --nproc-per-node "$n" --no-python "$bin" --collective all_reduce --dtype f32 --min-bytes 256M \
            --max-bytes 256M --no-ceilings --out "$diag" --overwrite > "$OUT/diag-ours-${n}gpu.log" 2>&1
        NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV CUDA_VISIBLE_DEVICES=$visible timeout 60 torchrun --standalone \
            --nproc-per-node "$n" "$peer" --plan "$diag" --out /tmp/comm_diag_peer.json > "$OUT/diag-torch-${n}gpu.log" 2>&1
        "$bin" --merge /tmp/comm_diag_peer.json --out "$diag" | tail -2
        for f in ours torch; do
            echo "--- $f: NCCL lines of rank 0 (version, env, channels, algorithms)"
            grep -E "^[^ ]+:[0-9]+:[0-9]+ \[0\] NCCL INFO" "$OUT/diag-$f-${n}gpu.log" | grep -iE "version|NCCL_|channels|Algo|proto|nvls|CC|P2P|cumem|register" \
                | sed -E 's/^[^ ]+ \[0\] NCCL INFO //' | sort | uniq -c | sort -rn | head -25
        done
    fi
    if [ "${OURS:-1}" != 0 ]; then
        ours="$OUT/comm-ours-${n}gpu.json"
        step "our one-shot all-reduce beside NCCL up to ${OURS_MAX_BYTES:-256K} on $n GPUs"
        kflags=(); for k in ${OURS_KERNELS:-push}; do kflags+=(--ours-kernel "$k"); done
        CUDA_VISIBLE_DEVICES=$visible timeout $((30 + 30 * ${#kflags[@]} / 2)) torchrun --standalone --nproc-per-node "$n" --no-python \
            "$bin" --collective all_reduce --min-bytes "${OURS_MIN_BYTES:-8}" --max-bytes "${OURS_MAX_BYTES:-256K}" \
            --ours-max-bytes "${OURS_MAX_BYTES:-256K}" "${kflags[@]}" --no-ceilings --out "$ours" 2>&1 | grep -vE "^\[" | tail -20
        echo "ours rc=${PIPESTATUS[0]}"
        [ -s "$ours" ] && python3 - "$ours" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
rows = {}
for r in a["results"]:
    p = r["params"]
    rows.setdefault((p["dtype"], p["bytes"]), {})[r["implementation"]] = r
ours = sorted({i for imps in rows.values() for i in imps} - {"nccl"})
print("dtype bytes nccl_us " + " ".join(f"{o}_us nccl/{o}" for o in ours) + " checks")
for (d, b), imps in sorted(rows.items()):
    t = {k: (v["stats"]["time_us"]["p50"] if v["status"] == "ok" else None) for k, v in imps.items()}
    n = t.get("nccl")
    cells = []
    for o in ours:
        cells += [f"{t[o]:.2f}" if t.get(o) else "-", f"{n / t[o]:.2f}" if n and t.get(o) else "-"]
    ok = "/".join(str((v.get("correctness") or {}).get("passed")) for v in imps.values())
    print(d, b, f"{n:.2f}" if n else "-", *cells, ok)
PY
    fi
done
ls -la "$OUT"
step "done (status $status)"
exit $status
