#!/usr/bin/env python3
"""layernorm_peers.py: the LayerNorm peers a user would pick, timed as layernorm_bench times.

Peers: `torch` (torch.nn.functional.layer_norm), `torch-compile` (torch.compile of the same call,
dynamic=False, compiled once per shape and dtype) and `triton` (a one-pass kernel: one program
per row, the row in registers, the launch rule of Triton's LayerNorm tutorial).

The points are read from a layernorm artifact (`--plan ARTIFACT.json`, normally the one the same
call just wrote), so each peer row has exactly the params of candle's row of that point, and each
is timed with the method, warm-up and launches per sample of our row of that point (src/gpu/
timing.rs, src/gpu/rotation.rs): warm = back-to-back launches on one buffer set (20 per CUDA-event
pair), the stream held by a spin kernel while the host queues each sample; cold = the same, the
launches cycling through N buffer sets, N the fewest with (N - 1) x bytes moved >= 2 x L2 (the
L2 size and multiple read from the artifact's notes), or an L2 flush before each single launch
where that needs more than 64 sets. Sample counts are our row's, capped at --max-samples.

Each (shape, dtype) draws fresh random inputs; each peer's output is checked against a float64
reference (relative L2 error within the artifact's tolerance) on a NaN-poisoned output before it
is timed; a peer that fails the check gets failed rows without timings. The output file holds raw
per-sample times (us per launch); `layernorm_bench --merge FILE --out ARTIFACT` computes the
statistics and GB/s with the same Rust code as our rows.

Clocks: after each sample NVML is read (libnvidia-ml through ctypes, at most every 20 ms, as
src/gpu/device.rs reads it for our rows), and a sample is throttled when NVML reports a
clock-throttle reason other than GPU idle, or an SM clock below the board's top clock while the
GPU is busy (src/env/gpu.rs). Each timed row records how many of its samples were; the merge
calls a row with at least a fifth of them throttled "throttled" (src/sampling.rs), which
`compare` never judges and the dashboard marks. Where NVML cannot be read the rows say so.

Usage: python3 bench/peers/layernorm_peers.py --plan layernorm.json --out /tmp/ln_peers.json
"""

import argparse
import json
import math
import os
import random
import re
import sys
import time

IMPLS = ("torch", "torch-compile", "triton")
BENCHMARK = "layernorm_forward"
# The params that name a point (src/layernorm/peers.rs POINT_PARAMS).
POINT_PARAMS = ("shape", "rows", "cols", "dtype", "mode", "eps", "device")
# Timing methods and the rotation rule of src/gpu/rotation.rs.
METHOD_ROTATING = "cuda_events_rotating_buffers"
METHOD_HELD = "cuda_events_held"
METHOD_EVENTS = "cuda_events"
MAX_SETS = 64
# Spacing of NVML reads while timing (src/gpu/device.rs THROTTLE_READ_INTERVAL).
THROTTLE_READ_INTERVAL_S = 0.020
# NVML's clock-event reason bit for an idle GPU, which does not slow anything.
NVML_REASON_GPU_IDLE = 0x1
NVML_CLOCK_SM = 1
DEFAULT_L2_MULTIPLE = 2
# The longest stream hold before a sample (src/gpu/timing.rs MAX_HOLD).
MAX_HOLD_S = 0.020
# What a NaN or infinite error is written as (JSON has no NaN; docs/artifacts.md).
NAN_ERR = sys.float_info.max
DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
# Relative L2 error allowed against float64 where the plan's row has no check (src/layernorm/dtype.rs).
TOLERANCE = {"f32": 1e-5, "f16": 1e-2, "bf16": 1e-2}


# ---- pure parts: plan, rule, rows, file (no torch needed) ----

def sets_needed(bytes_per_set, l2_bytes, l2_multiple):
    """The fewest sets with (sets - 1) * bytes_per_set >= l2_multiple * l2_bytes, at least 2."""
    need = -(-(l2_multiple * l2_bytes) // max(bytes_per_set, 1))
    return max(need + 1, 2)


def plan_sets(bytes_per_set, l2_bytes, l2_multiple):
    """The sets a cold point rotates through, or None when it needs more than MAX_SETS."""
    sets = sets_needed(bytes_per_set, l2_bytes, l2_multiple)
    return sets if sets <= MAX_SETS else None


def bytes_moved(rows, cols, dtype):
    """x read once + y written once, as the artifact counts."""
    return 2 * rows * cols * DTYPE_BYTES[dtype]


def l2_rule(artifact):
    """(l2_multiple, l2_bytes) from the artifact's timing note, or None."""
    for n in artifact.get("notes", []):
        m = re.search(r">= (\d+) x L2 \((\d+) bytes\)", n)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def rotated_sets_in(row):
    """The sets a timed cold row rotated through, from its note, or None."""
    for n in row.get("notes", []):
        m = re.search(r"cold by rotation: (\d+) buffer sets", n)
        if m:
            return int(m.group(1))
    return None


def read_plan(artifact, max_samples):
    """The points of a layernorm artifact in run order, each with the timed row it mirrors
    (ours if timed, else candle's): params, timing, sample count, tolerance."""
    if artifact.get("kind") != "layernorm":
        raise SystemExit(f"--plan: kind is {artifact.get('kind')!r}, expected 'layernorm'")
    points, by_key = [], {}
    for r in artifact.get("results", []):
        if r.get("benchmark") != BENCHMARK:
            continue
        p = r["params"]
        missing = [k for k in POINT_PARAMS if k not in p]
        if missing:
            raise SystemExit(f"--plan: a {r['implementation']} row lacks params {missing}")
        key = json.dumps([p[k] for k in POINT_PARAMS])
        if key not in by_key:
            by_key[key] = {"params": {k: p[k] for k in POINT_PARAMS}, "mirror": None}
            points.append(by_key[key])
        pt = by_key[key]
        timed = r.get("status") == "ok" and r.get("timing") and "time_us" in r.get("stats", {})
        if timed and (pt["mirror"] is None or r["implementation"] == "opbench"):
            pt["mirror"] = r
    for pt in points:
        m = pt["mirror"]
        if m is None:
            continue
        t = m["timing"]
        pt["method"] = t["method"]
        pt["warmup"] = t["warmup"]
        pt["launches_per_sample"] = t["launches_per_sample"]
        pt["samples"] = max(1, min(m["stats"]["time_us"]["n"], max_samples))
        pt["tolerance"] = ((m.get("correctness") or {}).get("tolerance")
                           or TOLERANCE[pt["params"]["dtype"]])
        pt["mirror_sets"] = rotated_sets_in(m)
    return points


def timing_plan(pt, l2_bytes, l2_multiple):
    """How a point is timed: (method, launches per sample, sets, held, flush, note)."""
    p = pt["params"]
    mode, method, per = p["mode"], pt["method"], pt["launches_per_sample"]
    if mode == "warm":
        return method, per, 1, method == METHOD_HELD, False, None
    nbytes = bytes_moved(p["rows"], p["cols"], p["dtype"])
    sets = plan_sets(nbytes, l2_bytes, l2_multiple)
    if method == METHOD_ROTATING and sets is not None:
        note = None
        if pt.get("mirror_sets") not in (None, sets):
            note = f"the mirrored row rotated {pt['mirror_sets']} sets; the rule here gives {sets}"
        return METHOD_ROTATING, per, sets, True, False, note
    why = ("our row of this point was flushed too" if sets is not None else
           f"rotation would need {sets_needed(nbytes, l2_bytes, l2_multiple)} buffer sets of "
           f"{nbytes} bytes (more than {MAX_SETS})")
    return METHOD_EVENTS, 1, 1, False, True, f"cold by an L2 flush before each launch: {why}"


def peer_row(impl, pt, status, samples=None, timing=None, correctness=None, notes=()):
    """A row as `layernorm_bench --merge` reads it (src/layernorm/peers.rs PeerRow)."""
    row = {"benchmark": BENCHMARK, "implementation": impl, "status": status,
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
    """The UUID's 32 hex digits, dashed, however it was written ("GPU-..." by NVML, plain or
    wrapped by torch); "" when there is none."""
    m = re.search(r"([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})",
                  str(u or "").lower())
    return "-".join(m.groups()) if m else ""


def throttled_reading(reasons_mask, sm_mhz, top_sm_mhz):
    """src/env/gpu.rs `throttled_now`: a clock-throttle reason other than GPU idle, or a busy
    GPU's SM clock below its top clock."""
    idle = bool(reasons_mask & NVML_REASON_GPU_IDLE)
    below_top = not idle and sm_mhz is not None and top_sm_mhz and sm_mhz < top_sm_mhz
    return bool(reasons_mask & ~NVML_REASON_GPU_IDLE) or bool(below_top)


class Clocks:
    """NVML through ctypes (no Python package needed): whether the GPU's clocks were held back,
    read at most every THROTTLE_READ_INTERVAL_S so that reading does not perturb the timing."""

    def __init__(self, lib, handle, top_sm_mhz, reasons_fn):
        self.lib, self.handle, self.top_sm_mhz, self.reasons_fn = lib, handle, top_sm_mhz, reasons_fn
        self.last = None  # (perf_counter, throttled)

    @classmethod
    def open(cls, uuid):
        """Clocks of the GPU with this UUID ("GPU-..."), or (None, why) when NVML cannot say."""
        import ctypes
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError as e:
            return None, f"libnvidia-ml.so.1 could not be loaded ({e})"
        rc = lib.nvmlInit_v2()
        if rc != 0:
            return None, f"nvmlInit_v2 returned {rc}"
        handle = ctypes.c_void_p()
        rc = lib.nvmlDeviceGetHandleByUUID(str(uuid).encode(), ctypes.byref(handle))
        if rc != 0:
            return None, f"nvmlDeviceGetHandleByUUID({uuid}) returned {rc}"
        mhz = ctypes.c_uint()
        if lib.nvmlDeviceGetApplicationsClock(handle, NVML_CLOCK_SM, ctypes.byref(mhz)) == 0 \
                and mhz.value > 0:
            top = mhz.value
        elif lib.nvmlDeviceGetMaxClockInfo(handle, NVML_CLOCK_SM, ctypes.byref(mhz)) == 0:
            top = mhz.value
        else:
            return None, "NVML gave neither the applications nor the maximum SM clock"
        for name in ("nvmlDeviceGetCurrentClocksEventReasons",
                     "nvmlDeviceGetCurrentClocksThrottleReasons"):
            fn = getattr(lib, name, None)
            if fn is not None:
                return cls(lib, handle, top, fn), None
        return None, "this NVML has no call for the current clock-throttle reasons"

    def throttled_now(self):
        """One NVML reading; unreadable state counts as not held back (as in src/env/gpu.rs)."""
        import ctypes
        mask, mhz = ctypes.c_ulonglong(), ctypes.c_uint()
        if self.reasons_fn(self.handle, ctypes.byref(mask)) != 0:
            return False
        sm = mhz.value if self.lib.nvmlDeviceGetClockInfo(
            self.handle, NVML_CLOCK_SM, ctypes.byref(mhz)) == 0 else None
        return throttled_reading(mask.value, sm, self.top_sm_mhz)

    def throttled_recently(self):
        """The latest reading, taken now if it is older than THROTTLE_READ_INTERVAL_S."""
        now = time.perf_counter()
        if self.last is None or now - self.last[0] >= THROTTLE_READ_INTERVAL_S:
            self.last = (now, self.throttled_now())
        return self.last[1]


# ---- the GPU run ----

def make_triton():
    """The one-pass Triton LayerNorm forward and its launcher (the tutorial's launch rule)."""
    import triton
    import triton.language as tl

    @triton.jit
    def layer_norm_fwd(X, Y, W, B, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK)
        mask = offs < N
        x = tl.load(X + row * N + offs, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / N
        xc = tl.where(mask, x - mean, 0.0)
        var = tl.sum(xc * xc, axis=0) / N
        rstd = 1.0 / tl.sqrt(var + eps)
        w = tl.load(W + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(B + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + row * N + offs, (xc * rstd * w + b).to(Y.dtype.element_ty), mask=mask)

    def launch(x2d, w, b, y2d, eps):
        rows, n = x2d.shape
        block = triton.next_power_of_2(n)
        if block > 65536 // x2d.element_size():
            raise ValueError(f"rows of {n} do not fit the one-pass kernel's registers")
        num_warps = min(max(block // 256, 1), 8)
        layer_norm_fwd[(rows,)](x2d, y2d, w, b, n, eps, BLOCK=block, num_warps=num_warps)

    return launch, triton.__version__


class Gpu:
    """The stream hold (torch.cuda._sleep, calibrated), the L2 flush and CUDA-event sampling."""

    def __init__(self, torch, l2_bytes):
        self.torch = torch
        self.flush_buf = torch.empty(2 * l2_bytes, dtype=torch.uint8, device="cuda")
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
        cycles = 10_000_000
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.cuda._sleep(cycles)
        e.record()
        e.synchronize()
        self.cycles_per_s = cycles / (s.elapsed_time(e) * 1e-3)

    def hold(self, seconds):
        self.torch.cuda._sleep(max(1, int(seconds * self.cycles_per_s)))

    def measure(self, launch, sets, per_sample, warmup, samples, held, flush, clocks=None):
        """src/gpu/timing.rs: `measure` (flush: an L2 flush, then one launch per event pair;
        neither held nor flushed: back to back) or `measure_rotating` (held). Returns the times,
        the warm-up, a note, and how many samples were throttled (None without `clocks`)."""
        torch = self.torch
        sets, nxt = max(1, sets), 0
        warmup = max(warmup, sets) if held else warmup
        t0 = time.perf_counter()
        for _ in range(warmup):
            launch(nxt % sets)
            nxt += 1
        per_launch = (time.perf_counter() - t0) / max(warmup, 1)
        torch.cuda.synchronize()
        hold_s = min(2 * per_launch * per_sample + 20e-6, MAX_HOLD_S)
        out, held_total, host_bound = [], 0.0, 0
        throttled = 0 if clocks is not None else None
        for _ in range(samples):
            if flush:
                self.flush_buf.zero_()
            if held:
                self.hold(hold_s)
                held_total += hold_s
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            t = time.perf_counter()
            for _ in range(per_sample):
                launch(nxt % sets)
                nxt += 1
            took = time.perf_counter() - t
            end.record()
            if held:
                host_bound += took + 2e-6 >= hold_s
                hold_s = min(2 * took + 20e-6, MAX_HOLD_S)
            end.synchronize()
            out.append(start.elapsed_time(end) * 1e3 / per_sample)
            if clocks is not None:
                throttled += clocks.throttled_recently()
        torch.cuda.synchronize()
        note = None
        if held:
            note = (f"{per_sample} launches per sample; stream held {held_total * 1e6 / samples:.0f} "
                    f"us on average before each sample while the host queued it ({host_bound} of "
                    f"{samples} samples queued longer than the hold)")
        return out, warmup, note, throttled


def inputs(torch, shape, cols, dt, seed):
    """x = offset + scale * N(0,1) per row, gamma +-U[0.5,1.5), beta U[-1,1) (as ours)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    rows = math.prod(shape[:-1])
    f32 = dict(device="cuda", dtype=torch.float32, generator=g)
    offset = torch.rand(rows, 1, **f32) * 4 - 2
    scale = torch.rand(rows, 1, **f32) * 2 + 0.1
    x = (offset + scale * torch.randn(rows, cols, **f32)).to(dt).reshape(shape)
    sign = torch.where(torch.rand(cols, **f32) < 0.5, -1.0, 1.0)
    gamma = (sign * (torch.rand(cols, **f32) + 0.5)).to(dt)
    beta = (torch.rand(cols, **f32) * 2 - 1).to(dt)
    return x, gamma, beta


def reference(torch, x, gamma, beta, eps):
    xd = x.double().reshape(-1, x.shape[-1])
    mean = xd.mean(dim=1, keepdim=True)
    xc = xd - mean
    var = (xc * xc).mean(dim=1, keepdim=True)
    return (xc / torch.sqrt(var + eps) * gamma.double() + beta.double()).reshape(-1)


def compare(torch, y, ref, tolerance):
    """The artifact's correctness block: relative L2 error and max abs error vs float64."""
    yd = y.double().reshape(-1)
    if not bool(torch.isfinite(yd).all()):
        return {"reference": "float64 (torch on the GPU)", "max_abs_err": NAN_ERR,
                "rel_err": NAN_ERR, "tolerance": tolerance, "passed": False}
    d = yd - ref
    rel = finite((d.norm() / ref.norm().clamp_min(1e-300)).item())
    max_abs = finite(d.abs().max().item())
    return {"reference": "float64 (torch on the GPU)", "max_abs_err": max_abs, "rel_err": rel,
            "tolerance": tolerance, "passed": rel <= tolerance}


def same_bits(torch, a, b):
    view = torch.int32 if a.element_size() == 4 else torch.int16
    return bool(torch.equal(a.view(view), b.view(view)))


def run_group(torch, F, gpu, group, seed, impls, triton_launch, l2, out_rows, clocks=None):
    """One shape and dtype: inputs, each peer checked, then each of its points timed."""
    p0 = group[0]["params"]
    dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    shape = [int(d) for d in p0["shape"].split("x")]
    cols, eps, dt = int(p0["cols"]), float(p0["eps"]), dtypes[p0["dtype"]]
    x, gamma, beta = inputs(torch, shape, cols, dt, seed)
    ref = reference(torch, x, gamma, beta, eps)
    plans = [timing_plan(pt, l2[1], l2[0]) for pt in group]
    max_sets = max(pl[2] for pl in plans)
    xs = [x] + [x.clone() for _ in range(max_sets - 1)]
    tol = next(pt["tolerance"] for pt in group)
    for impl in impls:
        notes, ys = [], None
        try:
            if impl == "torch":
                fn = lambda j: F.layer_norm(xs[j], (cols,), gamma, beta, eps)  # noqa: E731
            elif impl == "torch-compile":
                torch._dynamo.reset()
                compiled = torch.compile(
                    lambda t: F.layer_norm(t, (cols,), gamma, beta, eps), dynamic=False,
                    fullgraph=True)
                t0 = time.perf_counter()
                compiled(x)
                torch.cuda.synchronize()
                notes.append(f"torch.compile(dynamic=False, fullgraph=True) compiled this shape and "
                             f"dtype in {time.perf_counter() - t0:.1f} s (first call, not timed)")
                fn = lambda j: compiled(xs[j])  # noqa: E731
            else:
                if triton_launch is None:
                    raise RuntimeError("triton could not be imported")
                ys = [torch.empty_like(x) for _ in range(max_sets)]
                fn = lambda j: triton_launch(  # noqa: E731
                    xs[j].view(-1, cols), gamma, beta, ys[j].view(-1, cols), eps)
            if ys is None:
                # The op allocates its output: NaN-fill and release a block of that size first,
                # so the allocator hands the poisoned block to the checked call.
                junk = torch.full_like(x, float("nan"))
                del junk
                y = fn(0)
            else:
                for yj in ys:
                    yj.fill_(float("nan"))
                fn(0)
                y = ys[0]
            torch.cuda.synchronize()
            check = compare(torch, y, ref, tol)
            checked = y.clone() if ys is not None else None
            del y
        except Exception as e:  # a peer that cannot run this point fails it and the run goes on
            for pt in group:
                out_rows.append(peer_row(impl, pt, "failed", notes=notes + [f"error: {e}"]))
            print(f"  {impl}: error: {e}", file=sys.stderr)
            continue
        for pt, (method, per, sets, held, flush, tnote) in zip(group, plans):
            if not check["passed"]:
                out_rows.append(peer_row(impl, pt, "failed", correctness=check, notes=notes + [
                    f"off the float64 reference (rel_err {check['rel_err']:.2e} > {tol:.0e}): not timed"]))
                continue
            try:
                if ys is not None:
                    for yj in ys[:sets]:
                        yj.fill_(float("nan"))
                samples, warmup, hnote, throttled = gpu.measure(
                    fn, sets, per, pt["warmup"], pt["samples"], held, flush, clocks)
                if ys is not None and not all(same_bits(torch, yj, checked) for yj in ys[:sets]):
                    raise RuntimeError("the timed launches' output differs from the checked output")
            except Exception as e:
                out_rows.append(peer_row(impl, pt, "failed", correctness=check,
                                         notes=notes + [f"error while timing: {e}"]))
                print(f"  {impl} {pt['params']['mode']}: error: {e}", file=sys.stderr)
                continue
            timing = {"method": method, "warmup": warmup, "launches_per_sample": per}
            if throttled is not None:
                timing["throttled_samples"] = throttled
            if method == METHOD_ROTATING:
                timing["rotation"] = {"sets": sets, "l2_bytes": l2[1], "l2_multiple": l2[0]}
            out_rows.append(peer_row(impl, pt, "ok", samples=samples, timing=timing,
                                     correctness=check, notes=notes + [tnote, hnote]))
            med = sorted(samples)[len(samples) // 2]
            flagged = f", {throttled} throttled" if throttled else ""
            print(f"  {impl:13s} {pt['params']['mode']}: {med:9.2f} us (median of {len(samples)}"
                  f"{flagged})", file=sys.stderr)
    del xs, x, ref


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plan", required=True, help="the layernorm artifact whose points to time")
    ap.add_argument("--out", required=True, help="the peer file to write (JSON)")
    ap.add_argument("--impl", action="append", choices=IMPLS,
                    help="a peer to run; repeatable [default: all three]")
    ap.add_argument("--max-samples", type=int, default=100,
                    help="cap on samples per row (else the mirrored row's count)")
    ap.add_argument("--seed", type=int, help="seed of the inputs [default: random, recorded]")
    a = ap.parse_args()
    if a.max_samples < 1:
        ap.error("--max-samples must be at least 1")
    try:
        with open(a.plan) as f:
            artifact = json.load(f)
    except OSError as e:
        ap.error(f"--plan {a.plan}: cannot be read ({e.strerror}): give the layernorm artifact "
                 "that layernorm_bench wrote on this GPU")
    except ValueError as e:
        ap.error(f"--plan {a.plan}: not JSON ({e}): give the layernorm artifact that "
                 "layernorm_bench wrote on this GPU")
    points = read_plan(artifact, a.max_samples)
    impls = a.impl or list(IMPLS)
    seed = a.seed if a.seed is not None else random.randrange(2**31)

    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device: the peers time on the GPU the artifact was measured on")
    props = torch.cuda.get_device_properties(0)
    device = {"name": torch.cuda.get_device_name(0)}
    if bare_uuid(getattr(props, "uuid", None)):
        device["uuid"] = "GPU-" + bare_uuid(props.uuid)
    gpu_env = artifact.get("env", {}).get("gpu") or {}
    if device.get("uuid") and bare_uuid(gpu_env.get("uuid")):
        same = bare_uuid(device["uuid"]) == bare_uuid(gpu_env["uuid"])
    else:
        same = device["name"].strip() == str(gpu_env.get("name", "")).strip()
    if not same:
        raise SystemExit(f"--plan was measured on {gpu_env.get('name')} ({gpu_env.get('uuid')}), "
                         f"this is {device}: run the peers on the same GPU")
    l2 = l2_rule(artifact) or (DEFAULT_L2_MULTIPLE, getattr(props, "L2_cache_size", 50 << 20))
    try:
        triton_launch, triton_version = make_triton()
    except Exception as e:
        triton_launch, triton_version = None, f"unavailable ({e})"
    gpu = Gpu(torch, l2[1])
    clocks, why = Clocks.open(device.get("uuid") or gpu_env.get("uuid") or "")
    notes = [
        f"layernorm peers (bench/peers/layernorm_peers.py): torch {torch.__version__} (CUDA "
        f"{torch.version.cuda}), triton {triton_version}, Python {sys.version.split()[0]}",
        "peers: torch = F.layer_norm; torch-compile = torch.compile(F.layer_norm, dynamic=False, "
        "fullgraph=True), compiled once per shape and dtype before timing; triton = a one-pass "
        "kernel, one program per row, the row in registers (fp32 math), num_warps by the Triton "
        "tutorial's rule",
        f"peer timing: each row mirrors our row of its point (method, warm-up, launches per "
        f"sample; samples capped at {a.max_samples}); cold rotation sets by the rule (N - 1) x "
        f"bytes moved >= {l2[0]} x L2 ({l2[1]} bytes); the stream held with torch.cuda._sleep "
        f"({gpu.cycles_per_s / 1e9:.2f} G cycles/s) while the host queues a sample; torch and "
        "torch-compile allocate their outputs per call, as a user's call does",
        f"peer inputs: fresh per shape and dtype from seed {seed} + group index, x = offset + "
        "scale * N(0,1) per row, gamma +-U[0.5,1.5), beta U[-1,1); checked against a float64 "
        "reference with the artifact's tolerance before timing, on a NaN-poisoned output (triton "
        "writes into NaN-filled buffers; the torch peers get a NaN-filled block released just "
        "before the call); triton's timed outputs compared bit for bit with the checked one",
    ]
    notes.append(
        "peer clocks: NVML read after each sample (at most every "
        f"{THROTTLE_READ_INTERVAL_S * 1e3:.0f} ms), top SM clock {clocks.top_sm_mhz} MHz; each "
        "timed row counts its throttled samples" if clocks else
        f"peer clocks: not read ({why}): whether the peers' samples were throttled is unknown")
    if clocks is None:
        print(f"warning: NVML not read, the peers' clocks are not recorded: {why}", file=sys.stderr)
    rows, groups = [], []
    for pt in points:
        if pt["mirror"] is None:
            for impl in impls:
                rows.append(peer_row(impl, pt, "skipped",
                                     notes=["no timed row of this point in the plan to mirror"]))
            continue
        key = (pt["params"]["shape"], pt["params"]["dtype"])
        if groups and groups[-1][0] == key:
            groups[-1][1].append(pt)
        else:
            groups.append((key, [pt]))
    for gi, ((shape, dtype), group) in enumerate(groups):
        print(f"[{gi + 1}/{len(groups)}] {shape} {dtype}", file=sys.stderr)
        run_group(torch, F, gpu, group, seed + gi, impls, triton_launch, l2, rows, clocks)
        torch.cuda.empty_cache()
        write_json_atomic(a.out, {"rows": rows, "notes": notes, "device": device})
    write_json_atomic(a.out, {"rows": rows, "notes": notes, "device": device})
    print(f"wrote {a.out}: {len(rows)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
