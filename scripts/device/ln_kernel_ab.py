#!/usr/bin/env python3
"""ln_kernel_ab.py: torch.compile's LayerNorm kernel and ours, each launched directly on buffers
of its own in one process, timed the same way, beside a device-to-device copy of the same bytes.

Why: bench/peers/layernorm_peers.py times the compiled *function* (its Python wrapper, y
allocated per call), layernorm_bench times our kernel; when the two disagree by a few percent
at the large shapes (docs/notes/layernorm.md), this tells whether the kernels differ or the ways
they are called. Entries, per shape and dtype, in a rotated order each round:
- `ours`: kernels/layernorm.cu's row kernel, compiled to PTX here as build.rs does and loaded
  through the driver API, at the launch src/layernorm/plan.rs makes (kernel, threads per row and
  block given per shape below, as layernorm_bench's table reports them);
- `triton-direct`: the Triton kernel the compiled module runs, launched through its own `run`
  with the arguments the compiled call passed it (recorded once; its output buffers kept);
- `compiled-call`: the compiled function itself, as the peers script times it;
- `copy`: y.copy_(x), a cudaMemcpyAsync of the same bytes.
Each sample: the stream is held by a spin kernel (torch.cuda._sleep) while LAUNCHES launches are
queued, then CUDA events around them; SAMPLES samples per entry per round, ROUNDS rounds, the
median of all. Outputs of ours and of the Triton kernel are checked against a float64 reference
(relative L2 error: f32 1e-5, f16/bf16 1e-2) on a NaN-poisoned buffer before any timing.
With --triton-ptx FILE (the PTX of the Triton kernel at the first SPEC's shape and dtype: the
`<kernel name>.ptx` in Triton's cache, ~/.triton/cache/*/, whose `.json` beside it has the
kernel's num_warps and shared bytes; the run prints the kernel name), that PTX and edits of it
are timed
too, each loaded through the driver API: `as-is`, and with one kind of cache hint taken out or
changed (see ptx_variants), to find which of its features its speed comes from.

Usage (GPU machine, from the repository root):
  python3 scripts/device/ln_kernel_ab.py [--rounds 5] [--samples 20] [--launches 10]
      [--triton-ptx FILE --triton-block 512 --triton-shared 192] [SPEC ...]
SPEC: ROWSxCOLS:DTYPE:KERNEL:TPR:BLOCK, e.g. 32768x4096:f32:layernorm_regs_f32_v4_n4:256:256.
"""

import argparse
import ctypes
import re
import subprocess
import sys
from pathlib import Path

try:  # the PTX edits (ptx_variants) need no torch; everything that runs a kernel does
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = F = None

DTYPES = ({"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
          if torch else {})
TOL = {"f32": 1e-5, "f16": 1e-2, "bf16": 1e-2}
DEFAULT = [
    "32768x4096:f32:layernorm_regs_f32_v4_n4:256:256",
    "16384x8192:f32:layernorm_regs_f32_v4_n4:512:512",
    "16384x8192:bf16:layernorm_regs_bf16_v8_n4:256:256",
    "32768x4096:bf16:layernorm_regs_bf16_v8_n4:128:128",
]
HOLD_CYCLES = 4_000_000  # about 2 ms at 1.98 GHz: longer than queueing LAUNCHES launches


class Driver:
    """The few driver API calls that load our PTX and launch a kernel on torch's stream."""

    def __init__(self, ptx: bytes):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.mod = self.load(ptx)

    def load(self, ptx: bytes):
        mod = ctypes.c_void_p()
        self._check(self.cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx)),
                    "cuModuleLoadData")
        return mod

    def _check(self, rc, what):
        if rc != 0:
            sys.exit(f"ln_kernel_ab: {what} failed with CUresult {rc}")

    def function(self, name, mod=None):
        f = ctypes.c_void_p()
        self._check(self.cu.cuModuleGetFunction(ctypes.byref(f), mod or self.mod, name.encode()),
                    f"cuModuleGetFunction({name})")
        return f

    def launch(self, f, grid, block, params, stream, shared=0):
        arr = (ctypes.c_void_p * len(params))(*[ctypes.addressof(p) for p in params])
        self._check(self.cu.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared,
                                           ctypes.c_void_p(stream), arr, None), "cuLaunchKernel")


LD_HINTED = re.compile(r"ld\.global\.L1::evict_(last|first)\.L2::cache_hint\.v4\.b32 (\{[^}]*\}), (\[[^\]]*\]), %rd\d+;")


def ptx_variants(ptx):
    """Edits of a Triton kernel's PTX, each changing one kind of access: the statistics pass's
    x loads are the hinted loads before the first bar.sync, the output pass's the evict_first
    ones after it; gamma and beta are the evict_last loads after it."""
    lines = ptx.split("\n")
    first_bar = next((i for i, line in enumerate(lines) if "bar.sync" in line), None)
    if first_bar is None:
        raise ValueError("no bar.sync in the PTX: not a two-pass reduction kernel like "
                         "torch.compile's LayerNorm")

    def edit(pass1=None, pass2_x=None, gb=None, store=None):
        out = []
        for i, line in enumerate(lines):
            m = LD_HINTED.search(line)
            if m:
                kind = "pass1" if i < first_bar else ("pass2_x" if m.group(1) == "first" else "gb")
                op = {"pass1": pass1, "pass2_x": pass2_x, "gb": gb}[kind]
                if op is not None:
                    line = line[:m.start()] + f"ld.global{op}.v4.b32 {m.group(2)}, {m.group(3)};" \
                        + line[m.end():]
            elif store is not None and "st.global.v4.b32" in line:
                line = line.replace("st.global.v4.b32", f"st.global{store}.v4.b32")
            out.append(line)
        return "\n".join(out)

    return [
        ("as-is", ptx),
        ("pass1-plain", edit(pass1="")),
        ("pass1-cs", edit(pass1=".cs")),
        ("pass2x-plain", edit(pass2_x="")),
        ("gb-plain", edit(gb="")),
        ("store-cs", edit(store=".cs")),
        ("all-plain", edit(pass1="", pass2_x="", gb="")),
        ("cs-like-ours", edit(pass1=".cs", pass2_x=".cs", gb=".nc", store=".cs")),
    ]


def rel_err(y, ref):
    d = (y.double() - ref).norm() / ref.norm()
    return float(d) if torch.isfinite(d) else float("inf")


def record_triton_calls(fn, args):
    """Calls fn(*args) once with every Inductor Triton kernel's run() recording its arguments."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    calls = []
    orig = CachingAutotuner.run

    def rec(self, *a, **kw):
        calls.append((self, a, kw))
        return orig(self, *a, **kw)

    CachingAutotuner.run = rec
    try:
        fn(*args)
    finally:
        CachingAutotuner.run = orig
    torch.cuda.synchronize()
    return calls


def timed(entries, rounds, samples, launches, nbytes):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = {name: [] for name, _ in entries}
    for r in range(rounds):
        for k in range(len(entries)):
            name, launch = entries[(k + r) % len(entries)]
            for _ in range(3):
                launch()
            for _ in range(samples):
                torch.cuda._sleep(HOLD_CYCLES)
                e0.record()
                for _ in range(launches):
                    launch()
                e1.record()
                e1.synchronize()
                times[name].append(e0.elapsed_time(e1) * 1000.0 / launches)
    out = {}
    for name, t in times.items():
        t.sort()
        us = t[len(t) // 2]
        out[name] = (us, nbytes / us / 1e3, (t[-1] - t[0]) / us * 100)
    return out


def parse_spec(spec):
    """ROWSxCOLS:DTYPE:KERNEL:TPR:BLOCK -> (shape, rows, cols, dtype, kernel, tpr, block)."""
    try:
        shape, dt, kname, tpr, block = spec.split(":")
        rows, cols = (int(v) for v in shape.split("x"))
        if dt not in TOL:
            raise ValueError(f"dtype {dt!r} is not f32, f16 or bf16")
        return shape, rows, cols, dt, kname, int(tpr), int(block)
    except ValueError as e:
        sys.exit(f"ln_kernel_ab: SPEC {spec!r}: {e}; write it as ROWSxCOLS:DTYPE:KERNEL:TPR:BLOCK, "
                 "e.g. 32768x4096:f32:layernorm_regs_f32_v4_n4:256:256")


def run_spec(spec, drv, args, triton_ptx=None):
    shape, rows, cols, dt, kname, tpr, block = spec
    dtype = DTYPES[dt]
    torch.manual_seed(rows * 7 + cols)
    x = (torch.rand(rows, cols, device="cuda") * 5 - 2).to(dtype)
    g = (torch.rand(cols, device="cuda") + 0.5).to(dtype)
    b = (torch.rand(cols, device="cuda") - 0.5).to(dtype)
    eps = 1e-5
    ref = F.layer_norm(x.double(), (cols,), g.double(), b.double(), eps)
    nbytes = 2 * x.numel() * x.element_size()
    stream = torch.cuda.current_stream().cuda_stream

    ours, y = our_launch(drv, kname, tpr, block, x, g, b, eps, stream)
    ours()
    torch.cuda.synchronize()
    err_ours = rel_err(y, ref)

    # torch.compile: compile and autotune, then record the kernel launches of one call
    torch._dynamo.reset()
    fn = torch.compile(lambda x, w, b: F.layer_norm(x, (cols,), w, b, eps), dynamic=False)
    fn(x, g, b)
    torch.cuda.synchronize()
    calls = record_triton_calls(fn, (x, g, b))
    if len(calls) != 1:
        print(f"{shape} {dt}: the compiled call ran {len(calls)} Triton kernels, not 1; skipped")
        return
    kern, a, kw = calls[0]
    yt = [t for t in a if isinstance(t, torch.Tensor) and t.shape == x.shape
          and t.data_ptr() != x.data_ptr()]
    if len(yt) != 1:
        print(f"{shape} {dt}: cannot tell the Triton kernel's output among its arguments; skipped")
        return
    yt = yt[0]
    yt.fill_(float("nan"))

    def triton_direct():
        kern.run(*a, **kw)
    triton_direct()
    torch.cuda.synchronize()
    err_triton = rel_err(yt, ref)
    launcher = kern.launchers[0]
    cfg = launcher.config
    name = getattr(getattr(kern, "fn", None), "__name__", "triton_kernel")
    print(f"{shape} {dt}: triton {name} {cfg.kwargs} num_warps={cfg.num_warps} "
          f"regs={getattr(launcher, 'n_regs', '?')} grid args={[v for v in a if not isinstance(v, torch.Tensor)]}; "
          f"rel err ours {err_ours:.1e}, triton {err_triton:.1e}")
    if not (err_ours <= TOL[dt] and err_triton <= TOL[dt]):
        print(f"{shape} {dt}: a check failed; not timed")
        return

    ycopy = torch.empty_like(x)

    def compiled_call():
        fn(x, g, b)

    def copy():
        ycopy.copy_(x)

    entries = [("ours", ours), ("triton-direct", triton_direct), ("compiled-call", compiled_call),
               ("copy", copy)]
    for extra in (args.also if triton_ptx else []):
        entries.append(ours_entry(drv, extra, x, g, b, ref, dt, eps, stream))
    if triton_ptx:
        entries += ptx_entries(drv, triton_ptx, args, x, g, b, ref, dt, rows, cols, stream)
    res = timed(entries, args.rounds, args.samples, args.launches, nbytes)
    base = res["ours"][0]
    for n, (us, gbps, spread) in res.items():
        print(f"{shape} {dt} {n:14s} us={us:8.2f} GB/s={gbps:7.0f} spread={spread:5.1f}% "
              f"vs_ours={(us / base - 1) * 100:+.2f}%")
    sys.stdout.flush()


def our_launch(drv, kname, tpr, block, x, g, b, eps, stream):
    """One of our row kernels at a launch (threads per row, block) over x's rows, writing a
    NaN-filled y of its own: the launch function and y."""
    rows, cols = x.shape
    f = drv.function(kname)
    y = torch.full_like(x, float("nan"))
    grid = (rows + block // tpr - 1) // (block // tpr)
    params = [ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(g.data_ptr()),
              ctypes.c_void_p(b.data_ptr()), ctypes.c_void_p(y.data_ptr()),
              ctypes.c_longlong(rows), ctypes.c_int(cols), ctypes.c_int(tpr), ctypes.c_float(eps)]

    def launch():
        drv.launch(f, grid, block, params, stream)
    return launch, y


def ours_entry(drv, extra, x, g, b, ref, dt, eps, stream):
    """Another launch of one of our kernels (KERNEL:TPR:BLOCK), checked like `ours`."""
    kname, tpr, block = extra.split(":")
    launch, y = our_launch(drv, kname, int(tpr), int(block), x, g, b, eps, stream)
    launch()
    torch.cuda.synchronize()
    err = rel_err(y, ref)
    if not err <= TOL[dt]:
        sys.exit(f"ln_kernel_ab: {extra} failed its check (rel err {err:.1e})")
    return (f"ours:{kname}:{tpr}", launch)


def ptx_entries(drv, ptx, args, x, g, b, ref, dt, rows, cols, stream):
    """Timed entries for each edit of the Triton kernel's PTX whose output passes the check
    (params: x, gamma, beta, y, xnumel, r0_numel, and two scratch pointers left null)."""
    m = re.search(r"\.visible \.entry (\w+)\(", ptx)
    if not m:
        sys.exit("ln_kernel_ab: --triton-ptx holds no .entry: not a kernel's PTX")
    name = m.group(1)
    out = []
    for label, text in ptx_variants(ptx):
        f = drv.function(name, drv.load(text.encode()))
        y = torch.full_like(x, float("nan"))
        params = [ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(g.data_ptr()),
                  ctypes.c_void_p(b.data_ptr()), ctypes.c_void_p(y.data_ptr()),
                  ctypes.c_uint(rows), ctypes.c_uint(cols), ctypes.c_void_p(0), ctypes.c_void_p(0)]

        def launch(f=f, params=params):
            drv.launch(f, rows, args.triton_block, params, stream, args.triton_shared)
        launch()
        torch.cuda.synchronize()
        err = rel_err(y, ref)
        print(f"  ptx {label}: rel err {err:.1e}")
        if err <= TOL[dt]:
            out.append((f"ptx:{label}", launch))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--launches", type=int, default=10)
    ap.add_argument("--triton-ptx", help="a Triton LayerNorm kernel's PTX for the first SPEC")
    ap.add_argument("--triton-block", type=int, default=512, help="its threads per block")
    ap.add_argument("--triton-shared", type=int, default=192, help="its shared memory bytes")
    ap.add_argument("--also", action="append", default=[],
                    help="another launch of ours for the first SPEC, KERNEL:TPR:BLOCK")
    ap.add_argument("specs", nargs="*")
    args = ap.parse_args()
    specs = [parse_spec(s) for s in args.specs or DEFAULT]
    triton_ptx = None
    if args.triton_ptx:
        try:
            triton_ptx = Path(args.triton_ptx).read_text()
        except OSError as e:
            sys.exit(f"ln_kernel_ab: --triton-ptx {args.triton_ptx}: {e.strerror}")
    if torch is None:
        sys.exit("ln_kernel_ab: needs torch (and a GPU); run it on the GPU machine")
    torch.zeros(1, device="cuda")  # the primary context, current on this thread
    ptx_path = "/tmp/layernorm_ab.ptx"
    subprocess.run(["nvcc", "--ptx", "-O3", "-std=c++17", "-lineinfo", "-arch=compute_90a",
                    "-Ikernels", "-o", ptx_path, "kernels/layernorm.cu"], check=True)
    with open(ptx_path, "rb") as fh:
        drv = Driver(fh.read())
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}")
    for i, spec in enumerate(specs):
        run_spec(spec, drv, args, triton_ptx if i == 0 else None)


if __name__ == "__main__":
    main()
