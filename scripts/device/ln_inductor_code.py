#!/usr/bin/env python3
"""ln_inductor_code.py: what torch.compile runs for LayerNorm at the shapes where it comes
closest to our kernel, so that its design can be compared with ours (docs/notes/layernorm.md).

For each shape and dtype: compiles F.layer_norm as layernorm_peers.py does (dynamic=False),
runs it once, then prints every Triton kernel of the compiled module: its source, the launch
configuration the autotuner kept (XBLOCK, R0_BLOCK, num_warps, num_stages) and its register and
spill counts. With --time, only times the compiled function instead, as
scripts/device/layernorm_probe.cu times its kernels (CUDA events around 10 back-to-back launches,
20 samples a round, 5 rounds, median of all), to set beside the probe's figures of the same call.
Usage (GPU machine): python3 scripts/device/ln_inductor_code.py [--time] [ROWSxCOLS:DTYPE ...]
"""

import sys

import torch
import torch.nn.functional as F
from torch._inductor.codecache import PyCodeCache

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
DEFAULT = ["32768x4096:f32", "16384x8192:bf16"]


def kernels_of(module):
    for name in dir(module):
        obj = getattr(module, name)
        if hasattr(obj, "launchers") or hasattr(obj, "fn") and hasattr(obj, "configs"):
            yield name, obj


def time_compiled(fn, args, nbytes, launches=10, samples=20, rounds=5):
    """Median us per launch and GB/s of x read and y written."""
    for _ in range(3):
        fn(*args)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(rounds * samples):
        start.record()
        for _ in range(launches):
            fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / launches)
    times.sort()
    us = times[len(times) // 2]
    return us, nbytes / us / 1e3


def main():
    timing = "--time" in sys.argv[1:]
    specs = [a for a in sys.argv[1:] if a != "--time"]
    for spec in specs or DEFAULT:
        shape, dt = spec.split(":")
        rows, cols = (int(v) for v in shape.split("x"))
        torch._dynamo.reset()
        before = set(PyCodeCache.modules) if isinstance(PyCodeCache.modules, dict) else None
        x = torch.randn(rows, cols, device="cuda", dtype=DTYPES[dt])
        w = torch.randn(cols, device="cuda", dtype=DTYPES[dt])
        b = torch.randn(cols, device="cuda", dtype=DTYPES[dt])
        fn = torch.compile(lambda x, w, b: F.layer_norm(x, (cols,), w, b, 1e-5), dynamic=False)
        fn(x, w, b)
        torch.cuda.synchronize()
        if timing:
            us, gbps = time_compiled(fn, (x, w, b), 2 * x.numel() * x.element_size())
            print(f"{rows}x{cols} {dt} torch.compile us={us:8.2f} GB/s={gbps:7.0f}")
            continue
        mods = PyCodeCache.modules
        mods = list(mods.values()) if isinstance(mods, dict) else list(mods)
        if before is not None:
            mods = [m for k, m in PyCodeCache.modules.items() if k not in before]
        print(f"=== {spec}: {len(mods)} compiled module(s)")
        for m in mods:
            for name, k in kernels_of(m):
                print(f"--- kernel {name}")
                for launcher in getattr(k, "launchers", []):
                    cfg = getattr(launcher, "config", None)
                    print(f"    kept config: {getattr(cfg, 'kwargs', cfg)} "
                          f"num_warps={getattr(cfg, 'num_warps', '?')} "
                          f"num_stages={getattr(cfg, 'num_stages', '?')} "
                          f"regs={getattr(launcher, 'n_regs', '?')} "
                          f"spills={getattr(launcher, 'n_spills', '?')}")
                src = getattr(getattr(k, "fn", None), "src", None)
                if src:
                    print(src)


if __name__ == "__main__":
    main()
