"""A small PyTorch workload for checking `trace` on a GPU against torch.profiler (run in two
separate processes by scripts/device/trace_tool.sh). Both modes run the same program: the
module-path NVTX ranges of python/opbench/trace_modules.py and the measured steps inside one NVTX range
"steps" (under torch.compile the module hooks do nothing inside compiled code in either mode).

  --mode trace:    the workload alone; `trace` counts the kernels of its trace_range row
                   "steps".
  --mode profile:  the same steps under torch.profiler (CUDA activities); prints
                   {"kernels": N, "kernel_time_us": T, "by_name": {name: count},
                   "time_by_name_us": {name: us}, "min_median_max_us_by_name": ...} over
                   them. With --early the profiler's CUPTI
                   is on from before the warm-up (a schedule's warm-up phase, whose records
                   are dropped), so CUDA graphs are captured and instantiated while it records,
                   as they are in a traced process.
--compile uses torch.compile (mode "reduce-overhead" with --graphs: CUDA graphs).
--step-times times each measured step with a CUDA event pair and adds the median, step_us_median;
in profile mode also step_us_median_before_profiler: as many steps timed the same way in the
same process just before the profiler starts. Where the GPU waits on the host between steps
(this small model's steps on a fast GPU), these are host time and say little about one kernel;
scripts/device/trace_copy_kernel.py times a single kernel behind a sleep instead."""

import argparse
import json
import statistics
import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from opbench import trace_modules  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Model(nn.Module):
    def __init__(self, d=512, heads=8, layers=4):
        super().__init__()
        self.layers = nn.ModuleList(Block(d, heads) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["trace", "profile"], required=True)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--graphs", action="store_true")
    p.add_argument("--early", action="store_true")
    p.add_argument("--step-times", action="store_true")
    a = p.parse_args()
    torch.manual_seed(0)
    model = Model().cuda().half().eval()
    trace_modules.annotate(model, backward=False)
    fn = model
    if a.compile:
        fn = torch.compile(model, mode="reduce-overhead" if a.graphs else "default")
    x = torch.randn(4, 128, 512, device="cuda", dtype=torch.half)

    def run(n):
        """n steps; the median step in microseconds by CUDA events with --step-times, else None."""
        if not a.step_times:
            for _ in range(n):
                fn(x)
            torch.cuda.synchronize()
            return None
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
        for start, end in pairs:
            start.record()
            fn(x)
            end.record()
        torch.cuda.synchronize()
        return statistics.median(start.elapsed_time(end) * 1e3 for start, end in pairs)

    def steps():
        torch.cuda.nvtx.range_push("steps")
        step_us = run(a.steps)
        torch.cuda.nvtx.range_pop()
        return step_us

    def warm_up():
        for _ in range(5):
            fn(x)
        torch.cuda.synchronize()

    from torch.profiler import ProfilerActivity, profile, schedule

    timing = {}
    with torch.no_grad():
        if a.mode == "trace":
            warm_up()
            step_us = steps()
            print(json.dumps({"steps": a.steps} | ({"step_us_median": step_us} if a.step_times else {})))
            return
        if a.early:
            plan = schedule(wait=0, warmup=1, active=1, repeat=1)
            with profile(activities=[ProfilerActivity.CUDA], schedule=plan) as prof:
                warm_up()
                prof.step()
                step_us = steps()
                prof.step()
        else:
            warm_up()
            if a.step_times:
                timing["step_us_median_before_profiler"] = run(a.steps)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                step_us = steps()
        if a.step_times:
            timing["step_us_median"] = step_us
    # Kineto's own events carry ns; FunctionEvent times are µs.
    cuda = torch.autograd.DeviceType.CUDA
    events = [e for e in prof.profiler.kineto_results.events() if e.device_type() == cuda]
    kernels = [e for e in events if not e.name().startswith(("Memcpy", "Memset"))]
    total_us = sum(e.duration_ns() for e in kernels) / 1e3
    by_name, time_by_name, each = {}, {}, {}
    for e in kernels:
        by_name[e.name()] = by_name.get(e.name(), 0) + 1
        time_by_name[e.name()] = time_by_name.get(e.name(), 0.0) + e.duration_ns() / 1e3
        each.setdefault(e.name(), []).append(e.duration_ns() / 1e3)
    spread = {n: [min(v), sorted(v)[len(v) // 2], max(v)] for n, v in each.items()}
    print(
        json.dumps(
            {
                "kernels": len(kernels),
                "kernel_time_us": total_us,
                "by_name": by_name,
                "time_by_name_us": time_by_name,
                "min_median_max_us_by_name": spread,
            }
            | timing
        )
    )

if __name__ == "__main__":
    main()
