"""Does torch.profiler, started inside a running process, make PyTorch's multi-tensor copy kernel
(multi_tensor_apply_kernel, the input copy cudagraph trees run before each graph replay) run
longer, or only measure it longer? Run by scripts/device/trace_graph_copy.sh.

One process, the same copies three times: before the profiler, under it, after it. Each phase
queues a sleep kernel first, so that the copies run back to back on the GPU however slowly the
host enqueues them, and times them with one CUDA event pair: GPU time per copy, whoever else is
watching. Under the profiler, Kineto's own duration of each copy kernel is printed beside it.
Prints one JSON line: us_per_copy_by_events for each phase, and kineto_us (min, median, max).
--no-profiler skips the middle phase (for a process that `trace` records from the start)."""

import argparse
import json
import statistics

import torch


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--copies", type=int, default=200)
    p.add_argument("--no-profiler", action="store_true")
    a = p.parse_args()
    src = [torch.randn(4, 128, 512, device="cuda", dtype=torch.half)]
    dst = [torch.empty_like(src[0])]

    def phase():
        """GPU microseconds per copy, the copies back to back behind a sleep kernel."""
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(50_000_000)
        start.record()
        for _ in range(a.copies):
            torch._foreach_copy_(dst, src)
        end.record()
        torch.cuda.synchronize()
        if not torch.equal(dst[0], src[0]):
            raise SystemExit("trace_copy_kernel.py: the copy is wrong")
        return start.elapsed_time(end) * 1e3 / a.copies

    for _ in range(3):
        phase()
    out = {"copies": a.copies, "us_per_copy_by_events": {"before": phase()}}
    if not a.no_profiler:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            out["us_per_copy_by_events"]["under_profiler"] = phase()
        cuda = torch.autograd.DeviceType.CUDA
        d = sorted(
            e.duration_ns() / 1e3
            for e in prof.profiler.kineto_results.events()
            if e.device_type() == cuda and "multi_tensor_apply_kernel" in e.name()
        )
        out["kineto_us"] = {"count": len(d), "min": d[0], "median": statistics.median(d), "max": d[-1]}
    out["us_per_copy_by_events"]["after"] = phase()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
