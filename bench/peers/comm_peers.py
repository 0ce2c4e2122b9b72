#!/usr/bin/env python3
"""comm_peers.py: torch.distributed's collectives at the points of a comm artifact, timed as
comm_bench times NCCL.

Started by torchrun, one process per GPU, after comm_bench in the same call:

    torchrun --standalone --nproc-per-node N bench/peers/comm_peers.py \
        --plan artifacts/comm.json --out /tmp/comm_peers.json
    comm_bench --merge /tmp/comm_peers.json --out artifacts/comm.json

The points are the NCCL rows of --plan (collective, dtype, bytes, count, world_size); each is
timed with that row's warm-up, collectives per sample and sample count (capped at
--max-samples): a stream hold (torch.cuda._sleep) while the host queues the sample, an 8-byte
all-reduce that lines the ranks up, then k back-to-back collectives between two CUDA events on
each rank, the sample's time the mean over ranks (src/comm/gpu.rs sampled, src/gpu/timing.rs's
hold). --no-align leaves the 8-byte all-reduce out, to see what the ranks' start skew costs.
all_reduce and broadcast are torch's in-place calls; the timed all_reduce runs on zeros, so
repeated sums stay finite. Before timing, each rank
checks its output of one call on fresh random inputs against a float64 reference that every rank
computes from every rank's seeded generator (copies exact, sums within (n+1) unit roundoffs of
the magnitude, src/comm/reference.rs); a point that fails on any rank gets a failed row without
times. Rank 0 writes the raw per-sample times; `comm_bench --merge` computes the statistics,
algbw and busbw with the same Rust code as NCCL's rows.
"""

import argparse
import json
import math
import os
import re
import statistics
import sys
import time

BENCHMARK = "comm"
IMPL = "torch"
# The params that name a point (src/comm/merge.rs POINT_PARAMS).
POINT_PARAMS = ("collective", "dtype", "bytes", "count", "world_size")
METHOD = "cuda_events"
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")
UNIT_ROUNDOFF = {"f32": 2.0 ** -24, "bf16": 2.0 ** -8}
# What a NaN or infinite error is written as (JSON has no NaN; docs/artifacts.md).
NAN_ERR = sys.float_info.max


# ---- pure parts: plan, tolerance, rows, file (no torch needed) ----

def read_plan(artifact, max_samples, collectives=None):
    """The NCCL points of a comm artifact in run order (only `collectives`, when given):
    params, warm-up, collectives per sample and samples (those of NCCL's timed row; a failed
    row gives a check-only point)."""
    if artifact.get("kind") != BENCHMARK:
        raise SystemExit(f"--plan: kind is {artifact.get('kind')!r}, expected 'comm'")
    points = []
    for r in artifact.get("results", []):
        if r.get("benchmark") != BENCHMARK or r.get("implementation") != "nccl":
            continue
        p = r.get("params", {})
        missing = [k for k in POINT_PARAMS if k not in p]
        if missing:
            raise SystemExit(f"--plan: an nccl row lacks params {missing}")
        if p["collective"] not in COLLECTIVES or p["dtype"] not in UNIT_ROUNDOFF:
            raise SystemExit(f"--plan: a row of {p['collective']} {p['dtype']}: not a comm point")
        if collectives is not None and p["collective"] not in collectives:
            continue
        pt = {"params": {k: p[k] for k in POINT_PARAMS}, "timed": False}
        t, stats = r.get("timing"), r.get("stats", {})
        if r.get("status") == "ok" and t and "time_us" in stats:
            pt.update(timed=True, warmup=t["warmup"], per_sample=t["launches_per_sample"],
                      samples=max(2, min(stats["time_us"]["n"], max_samples)))
        points.append(pt)
    if not points:
        raise SystemExit("--plan: no nccl rows: run comm_bench first and pass its artifact")
    return points


def tolerance(collective, dtype, world):
    """src/comm/reference.rs tolerance(): copies exact, sums (n+1) unit roundoffs."""
    if collective in ("all_gather", "broadcast"):
        return 0.0
    return (world + 1) * UNIT_ROUNDOFF[dtype]


def lengths(collective, count, world):
    """(input, output) elements of one rank for a message of `count` elements."""
    if collective == "all_gather":
        return count // world, count
    if collective == "reduce_scatter":
        return count, count // world
    return count, count


def mean_over_ranks(per_rank):
    """Each sample's time as the mean of the ranks' times of that sample."""
    n = len(per_rank)
    return [sum(s) / n for s in zip(*per_rank)]


RANK_MEDIANS = "each rank's own median (us): "


def rank_medians_note(per_rank):
    """Each rank's own median (us), as comm_bench notes its NCCL rows. Ranks that start their
    samples at different times tell apart here: the early rank's collectives wait for the late
    one, so its times are the longer."""
    return RANK_MEDIANS + ", ".join(
        f"{i}: {statistics.median(t):.2f}" for i, t in enumerate(per_rank))


def peer_row(pt, status, samples=None, timing=None, correctness=None, notes=()):
    """A row as `comm_bench --merge` reads it (src/artifact/peer.rs PeerRow)."""
    row = {"benchmark": BENCHMARK, "implementation": IMPL, "status": status,
           "params": dict(pt["params"]), "notes": [n for n in notes if n]}
    if samples:
        row["samples_us"] = [float(s) for s in samples]
    if timing:
        row["timing"] = timing
    if correctness:
        row["correctness"] = correctness
    return row


def finite(v):
    return v if math.isfinite(v) else NAN_ERR


def write_json_atomic(path, obj):
    """The whole file, replaced at once: a crash leaves the previous version, never half."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, allow_nan=False)
    os.replace(tmp, path)


def bare_uuid(u):
    """The UUID's hex digits, dashed, however it was written; "" when there is none."""
    m = re.search(r"([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})",
                  str(u or "").lower())
    return "-".join(m.groups()) if m else ""


# ---- the GPU run ----

def rank_input(torch, seed, rank, n, dtype):
    """Rank `rank`'s input: uniform in [-1, -1/8] and [1/8, 1], stored in `dtype`, from a
    generator any rank can replay."""
    g = torch.Generator(device="cuda").manual_seed(seed * 1000003 + rank)
    m = 0.125 + 0.875 * torch.rand(n, generator=g, device="cuda", dtype=torch.float64)
    sign = torch.randint(0, 2, (n,), generator=g, device="cuda") * 2 - 1
    return (m * sign).to(dtype)


def check_point(torch, dist, pt, rank, world, seed, tdt):
    """One call on fresh inputs, compared with the float64 reference; returns correctness."""
    p = pt["params"]
    c, count = p["collective"], p["count"]
    n_in, n_out = lengths(c, count, world)
    x = rank_input(torch, seed, rank, n_in, tdt)
    if c == "all_reduce":
        out = x.clone()
        dist.all_reduce(out)
    elif c == "broadcast":
        out = x.clone() if rank == 0 else torch.full_like(x, float("nan"))
        dist.broadcast(out, src=0)
    elif c == "all_gather":
        out = torch.full((n_out,), float("nan"), device="cuda", dtype=tdt)
        dist.all_gather_into_tensor(out, x)
    else:
        out = torch.full((n_out,), float("nan"), device="cuda", dtype=tdt)
        dist.reduce_scatter_tensor(out, x)
    torch.cuda.synchronize()
    if c in ("all_reduce", "reduce_scatter"):
        lo = rank * n_out if c == "reduce_scatter" else 0
        want = torch.zeros(n_out, dtype=torch.float64, device="cuda")
        mag = torch.zeros_like(want)
        for r in range(world):
            v = rank_input(torch, seed, r, n_in, tdt)[lo:lo + n_out].double()
            want += v
            mag += v.abs()
    elif c == "broadcast":
        want = rank_input(torch, seed, 0, n_in, tdt).double()
        mag = want.abs()
    else:
        want = torch.cat([rank_input(torch, seed, r, n_in, tdt) for r in range(world)]).double()
        mag = want.abs()
    got = out.double()
    bad = ~torch.isfinite(got)
    diff = (got - want).abs().masked_fill(bad, 0.0)
    rel = float((diff / mag).max()) if n_out else 0.0
    tol = tolerance(c, p["dtype"], world)
    non_finite = int(bad.sum())
    return {"reference": "float64 from every rank's seeded generator (torch, on the GPU)",
            "max_abs_err": finite(float(diff.max()) if n_out else 0.0),
            "rel_err": finite(rel), "tolerance": tol,
            "passed": non_finite == 0 and rel <= tol, "non_finite": non_finite}


def sleep_cycles_per_s(torch):
    """torch.cuda._sleep's cycles per second on this GPU, for the stream hold."""
    torch.cuda._sleep(1000)
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    torch.cuda._sleep(10_000_000)
    e.record()
    e.synchronize()
    return 10_000_000 / (s.elapsed_time(e) * 1e-3)


# src/gpu/timing.rs hold_after: twice the host's queueing time plus 20 us, at most 20 ms.
def hold_after(queue_s):
    return min(2 * queue_s + 20e-6, 20e-3)


def time_point(torch, dist, pt, world, tdt, cycles_per_s, align=True):
    """This rank's per-sample times (us per collective), NCCL's row's method and counts: a
    stream hold before each sample (the host's queueing off the clock), an 8-byte all-reduce
    that every rank leaves together (unless `align` is off: then a rank whose hold ends first
    times its wait for the others), then `per_sample` collectives between two CUDA events."""
    p = pt["params"]
    c, count = p["collective"], p["count"]
    n_in, n_out = lengths(c, count, world)
    x = torch.zeros(n_in, device="cuda", dtype=tdt)
    out = x if c in ("all_reduce", "broadcast") else torch.zeros(n_out, device="cuda", dtype=tdt)
    if c == "all_reduce":
        def once():
            dist.all_reduce(x)
    elif c == "broadcast":
        def once():
            dist.broadcast(x, src=0)
    elif c == "all_gather":
        def once():
            dist.all_gather_into_tensor(out, x)
    else:
        def once():
            dist.reduce_scatter_tensor(out, x)
    for _ in range(max(pt["warmup"], 1)):
        once()
    line_up = torch.ones(2, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    times = []
    hold_s = hold_after(10e-6 * pt["per_sample"])
    for _ in range(pt["samples"]):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(max(1, int(hold_s * cycles_per_s)))
        t = time.perf_counter()
        if align:
            dist.all_reduce(line_up)
        a.record()
        for _ in range(pt["per_sample"]):
            once()
        hold_s = hold_after(time.perf_counter() - t)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / pt["per_sample"])
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plan", required=True, help="the comm artifact comm_bench wrote")
    ap.add_argument("--out", required=True, help="peer file to write (rank 0)")
    ap.add_argument("--max-samples", type=int, default=200)
    ap.add_argument("--collective", default=",".join(COLLECTIVES),
                    help="comma-separated collectives of the plan to run (default: all four)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--min-bytes", type=int, default=0,
                    help="time only the plan's points of at least this many bytes")
    ap.add_argument("--no-align", action="store_true",
                    help="start each sample without the 8-byte all-reduce that lines the ranks "
                         "up (to measure what their start skew costs)")
    a = ap.parse_args()
    # Checked on every rank before the process group exists, so no rank waits for one that left.
    wanted = [c for c in a.collective.split(",") if c]
    bad = [c for c in wanted if c not in COLLECTIVES]
    if bad or not wanted:
        raise SystemExit(f"--collective {a.collective!r}: give one or more of {list(COLLECTIVES)}, "
                         "comma-separated")
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        raise SystemExit("no rank environment: start with torchrun --nproc-per-node N")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    import torch
    import torch.distributed as dist
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    plan = [None]
    if rank == 0:
        with open(a.plan) as f:
            plan[0] = read_plan(json.load(f), a.max_samples, wanted)
    dist.broadcast_object_list(plan, src=0)
    points = [pt for pt in plan[0] if pt["params"]["bytes"] >= a.min_bytes]
    props = torch.cuda.get_device_properties(local)
    device = {"name": torch.cuda.get_device_name(local)}
    if bare_uuid(getattr(props, "uuid", None)):
        device["uuid"] = "GPU-" + bare_uuid(props.uuid)
    notes = [f"torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
             f"{world} ranks, NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE')}, "
             + ("each sample starts behind a stream hold alone (--no-align)" if a.no_align else
                "each sample starts behind a stream hold and an 8-byte all-reduce that lines "
                "the ranks up")]
    cycles_per_s = sleep_cycles_per_s(torch)
    rows = []
    for i, pt in enumerate(points):
        p = pt["params"]
        if p["world_size"] != world:
            raise SystemExit(f"--plan was measured on {p['world_size']} ranks, this run has {world}")
        tdt = {"f32": torch.float32, "bf16": torch.bfloat16}[p["dtype"]]
        check = check_point(torch, dist, pt, rank, world, a.seed + i, tdt)
        checks = [None] * world
        dist.all_gather_object(checks, check)
        if not all(c["passed"] for c in checks):
            worst = max(checks, key=lambda c: c["rel_err"])
            rows.append(peer_row(pt, "failed", correctness=dict(worst, passed=False),
                                 notes=["check failed on some rank: not timed"]))
        elif not pt["timed"]:
            rows.append(peer_row(pt, "skipped", correctness=checks[0],
                                 notes=["NCCL's row of this point was not timed"]))
        else:
            mine = time_point(torch, dist, pt, world, tdt, cycles_per_s, align=not a.no_align)
            per_rank = [None] * world
            dist.all_gather_object(per_rank, mine)
            worst = max(checks, key=lambda c: c["rel_err"])
            rows.append(peer_row(pt, "ok", samples=mean_over_ranks(per_rank),
                                 timing={"method": METHOD, "warmup": pt["warmup"],
                                         "launches_per_sample": pt["per_sample"]},
                                 correctness=worst, notes=[rank_medians_note(per_rank)]))
        if rank == 0:
            r = rows[-1]
            t = r.get("samples_us")
            print(f"[{i + 1}/{len(points)}] {p['collective']} {p['dtype']} {p['bytes']} B: "
                  + (f"p50 {sorted(t)[len(t) // 2]:.2f} us" if t else r["status"]), flush=True)
            write_json_atomic(a.out, {"rows": rows, "notes": notes, "device": device})
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
