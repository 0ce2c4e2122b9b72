"""How a power-capped tensor-core product's time follows the SM clock, on one GPU.

Times torch.matmul (bf16, 4096^3 and 8192^3) and a memory-bound copy with CUDA events, one
sample of a few launches at a time, reading NVML's SM clock and throttle reasons around every
sample. Three regimes: back to back; an idle gap before each sample (does the clock recover?);
and the same after a long heat-up. Prints a table and writes every sample to $OUT/clock_study.json.
"""
import json
import os
import statistics
import sys
import time

import pynvml
import torch

OUT = os.environ.get("OUT", ".")
pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(0)


def nv(f, *a):
    try:
        return f(h, *a)
    except Exception as e:  # noqa: BLE001 - report what NVML does not give
        return f"unavailable: {e}"


board = {
    "name": nv(pynvml.nvmlDeviceGetName),
    "uuid": nv(pynvml.nvmlDeviceGetUUID),
    "serial": nv(pynvml.nvmlDeviceGetSerial),
    "pci_bus_id": nv(lambda d: pynvml.nvmlDeviceGetPciInfo(d).busId),
    "vbios": nv(pynvml.nvmlDeviceGetVbiosVersion),
    "power_limit_mw": nv(pynvml.nvmlDeviceGetEnforcedPowerLimit),
    "power_default_mw": nv(pynvml.nvmlDeviceGetPowerManagementDefaultLimit),
    "ecc_current": nv(lambda d: pynvml.nvmlDeviceGetEccMode(d)[0]),
    "mig_current": nv(lambda d: pynvml.nvmlDeviceGetMigMode(d)[0]),
    "max_sm_mhz": nv(pynvml.nvmlDeviceGetMaxClockInfo, pynvml.NVML_CLOCK_SM),
    "max_mem_mhz": nv(pynvml.nvmlDeviceGetMaxClockInfo, pynvml.NVML_CLOCK_MEM),
    "app_sm_mhz": nv(pynvml.nvmlDeviceGetApplicationsClock, pynvml.NVML_CLOCK_SM),
    "persistence": nv(pynvml.nvmlDeviceGetPersistenceMode),
    "compute_mode": nv(pynvml.nvmlDeviceGetComputeMode),
    "driver": pynvml.nvmlSystemGetDriverVersion(),
    "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
    "hostname": os.uname().nodename,
}
print(json.dumps(board, indent=1, default=str))
IDLE_BIT = 0x1


def state():
    sm = pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
    r = pynvml.nvmlDeviceGetCurrentClocksEventReasons(h) & ~IDLE_BIT
    p = pynvml.nvmlDeviceGetPowerUsage(h) / 1000
    t = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
    return sm, r, p, t


def workload(kind, n):
    if kind == "mm":
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        return lambda: torch.matmul(a, b)
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    return lambda: y.copy_(x)


def run(kind, n, launches, samples, gap_s):
    f = workload(kind, n)
    for _ in range(5):
        f()
    torch.cuda.synchronize()
    rows = []
    for _ in range(samples):
        if gap_s:
            time.sleep(gap_s)
        before = state()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(launches):
            f()
        e.record()
        mid = state()
        e.synchronize()
        after = state()
        rows.append({"us": s.elapsed_time(e) * 1e3 / launches, "before": before, "mid": mid, "after": after})
    return rows


def summary(name, rows, max_sm):
    us = [r["us"] for r in rows]
    mid = [r["mid"][0] for r in rows]
    thr = sum(1 for r in rows if r["mid"][1])
    top = sum(1 for r in rows if r["mid"][0] >= max_sm and not r["mid"][1])
    norm = [r["us"] * r["mid"][0] / max_sm for r in rows]
    clean = [r["us"] for r in rows if r["mid"][0] >= max_sm and not r["mid"][1]]
    cv = lambda v: statistics.pstdev(v) / statistics.mean(v) * 100 if len(v) > 1 else float("nan")
    med = lambda v: statistics.median(v) if v else float("nan")
    print(f"{name:28s} n={len(us):4d} p50={med(us):9.1f}us cv={cv(us):5.2f}% | thr={thr:4d} top={top:4d} "
          f"sm p50={med(mid):6.0f} [{min(mid)}-{max(mid)}] | clean p50={med(clean):9.1f} cv={cv(clean):5.2f}% | "
          f"norm p50={med(norm):9.1f} cv={cv(norm):5.2f}% | W={med([r['mid'][2] for r in rows]):.0f} T={rows[-1]['mid'][3]}")


max_sm = board["max_sm_mhz"]
res = {"board": board, "runs": {}}
plan = [
    ("mm4096 back-to-back", "mm", 4096, 10, 300, 0),
    ("mm4096 gap 20ms", "mm", 4096, 10, 100, 0.02),
    ("mm4096 gap 100ms", "mm", 4096, 10, 40, 0.1),
    ("mm8192 back-to-back", "mm", 8192, 3, 200, 0),
    ("mm8192 gap 100ms", "mm", 8192, 3, 40, 0.1),
    ("copy1GiB back-to-back", "copy", 1 << 28, 5, 200, 0),
    ("mm4096 after heat 20s", None, 4096, 10, 300, 0),
]
for name, kind, n, launches, samples, gap in plan:
    if kind is None:
        f = workload("mm", 8192)
        t0 = time.time()
        while time.time() - t0 < 20:
            for _ in range(20):
                f()
            torch.cuda.synchronize()
        kind = "mm"
    rows = run(kind, n, launches, samples, gap)
    res["runs"][name] = rows
    summary(name, rows, max_sm)
    sys.stdout.flush()
json.dump(res, open(os.path.join(OUT, "clock_study.json"), "w"))
