"""Greedy generation with a TinyLlama-1.1B-architecture model through Hugging Face transformers:
the PyTorch workload `trace` is checked and measured on (scripts/device/trace_workloads.sh,
docs/notes/trace_tool.md). Unmodified transformers code; nothing in it knows about `trace`.

  --mode run      generate --runs times after --warmup; the timed generations sit inside one
                  NVTX range "steps" (so `trace` totals their kernels in its trace_range row of
                  that name); prints JSON with the median milliseconds per generated token.
  --mode profile  the same generations under torch.profiler (CUDA activities) instead of the
                  range; prints JSON with the kernel count and summed kernel time over them,
                  the profile's events per category (kernel, cuda_runtime, cuda_driver, ...)
                  and the median milliseconds per token under the profiler.
  --mode alternate  for measuring what tracing costs inside one process, under
                  `trace --start-paused`: --pairs pairs of generations, one with recording
                  paused (CUPTI detached: untraced) and one recording (python/opbench/trace_control.py),
                  in the order UT, TU, UT, ... so a drift of the host over the run falls on both
                  alike, after one recording generation that is discarded (CUPTI's start-up);
                  prints JSON with each generation's ms per token and each pair's traced over
                  untraced in percent. Before all of these, --before untraced generations that
                  no recorder has touched yet: a recorder that leaves a cost behind after its
                  first use (CUPTI still attached) slows the pairs' untraced half as well, which
                  the pairs alone cannot see; untraced_over_before_pct and
                  traced_over_before_pct say it (off by default: a host that drifts within a
                  process moves this baseline more than the pairs, docs/notes/trace_tool.md).
                  Without `trace` both halves run untraced: the control that shows what the
                  method itself reads as a difference. With
                  --recorder profiler (and no `trace`) the recording half runs inside
                  torch.profiler (CUDA activities, the profile's start and end outside the
                  timing), the reference users have now. Each half's CPU time per token, of
                  the launching thread and of the process, says where a recorder's cost lands.
                  After every half, outside the timing, the process waits --settle-s seconds
                  and synchronizes twice (settle_ms_after_*: how long those synchronizations
                  took): torch.profiler with TEARDOWN_CUPTI=1 detaches CUPTI inside the next
                  CUDA call any thread makes after the profile stops (cuptiFinalize in that
                  call's callback), which would otherwise be the untraced half's first call.
  --compile       a static KV cache, with which transformers' generate compiles the forward
                  itself (torch.compile, mode "reduce-overhead": CUDA graphs), the setup
                  transformers documents for compiled generation.
  --modules       NVTX ranges named by module path (python/opbench/trace_modules.py), in both modes so
                  the two run the same kernels; eager only (hooks break compiled graphs).

Both modes also print a host control, host_control_ms: the median time of a fixed loop of small
CPU tensor operations (PyTorch's dispatcher without CUDA, the host work an eager launch repeats),
measured before CUDA starts, so before any injected tracer is loaded. Eager decode is bound by
the host, whose speed differs between processes; the overhead check prints ms_per_token over
host_control_ms to see whether this loop's speed is what differs (on the H200 hosts measured
so far it was not: docs/notes/trace_tool.md).

Weights: --model names a local folder or a Hugging Face id (from_pretrained: the real download
path); without it the model is TinyLlama-1.1B's architecture with random weights, which needs
no download and launches the same kernels."""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

# TinyLlama/TinyLlama-1.1B-Chat-v1.0's config.json, the fields that shape the computation.
TINYLLAMA = dict(
    vocab_size=32000,
    hidden_size=2048,
    intermediate_size=5632,
    num_hidden_layers=22,
    num_attention_heads=32,
    num_key_value_heads=4,
    max_position_embeddings=2048,
    rms_norm_eps=1e-5,
    rope_theta=10000.0,
    hidden_act="silu",
    tie_word_embeddings=False,
)


def kineto_categories(prof):
    """How many events of each category (kernel, cuda_runtime, cuda_driver, gpu_memcpy, ...)
    the profile holds, from its Chrome trace: what torch.profiler recorded beside the kernels."""
    import collections
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        events = json.loads(Path(f.name).read_text()).get("traceEvents", [])
    return dict(collections.Counter(e.get("cat", "?") for e in events if e.get("ph") == "X"))


def host_control_ms(torch, reps=7, ops=20000):
    """Median milliseconds of `reps` loops of `ops` small CPU tensor additions."""
    a, b, out = torch.ones(16), torch.ones(16), torch.empty(16)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(ops):
            torch.add(a, b, out=out)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def load_model(args, torch):
    import transformers

    if args.model:
        model = transformers.AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float16)
    else:
        config = transformers.LlamaConfig(**TINYLLAMA)
        torch.manual_seed(0)
        with torch.device("cuda"):
            model = transformers.LlamaForCausalLM(config).to(torch.float16)
    return model.cuda().eval()


def alternate(a, torch, generate, control_ms):
    """--mode alternate: untraced and traced generations in pairs inside this process."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    from opbench import trace_control

    traced = trace_control.available()
    profiler = a.recorder == "profiler"
    if profiler and traced:
        sys.exit("tinyllama_generate.py: --recorder profiler runs without `trace`")

    # CPU time per token of each generation, (this thread, the whole process), for the traced
    # and untraced halves: whether a recorder's cost lands on the launching thread or on others.
    cpu = {False: [], True: []}

    def run(record):
        t0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
        generate()
        torch.cuda.synchronize()
        t1, c1, p1 = time.perf_counter(), time.thread_time(), time.process_time()
        cpu[record].append(((c1 - c0) * 1e3 / a.new_tokens, (p1 - p0) * 1e3 / a.new_tokens))
        return (t1 - t0) * 1e3 / a.new_tokens

    # Milliseconds of the synchronizations after each half, (after untraced, after traced).
    settled = {False: [], True: []}

    def settle(record):
        # Outside the timing: a recorder that finishes detaching in the next CUDA call (Kineto's
        # teardown) does so here, not in the next half's first call.
        spent = 0.0
        for _ in range(2):
            time.sleep(a.settle_s)
            t0 = time.perf_counter()
            torch.cuda.synchronize()
            spent += (time.perf_counter() - t0) * 1e3
        settled[record].append(spent)

    def timed(record):
        if record and profiler:
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CUDA]):
                ms = run(record)
        else:
            if record:
                trace_control.resume()
            ms = run(record)
            if record:
                trace_control.pause()
        settle(record)
        return ms

    try:
        # Before the recorder is first used: what a process that never recorded runs at, to
        # tell a cost the recorder leaves behind after its first use (which the pairs' untraced
        # half would carry) from the cost of recording.
        before = [timed(False) for _ in range(a.before)]
        timed(True)  # discarded: CUPTI attaching for the first time
        for times in (*cpu.values(), *settled.values()):
            times.clear()  # the CPU and settle figures are the pairs' only
        untraced, recorded = [], []
        for k in range(a.pairs):
            for record in ((False, True) if k % 2 == 0 else (True, False)):
                (recorded if record else untraced).append(timed(record))
    except RuntimeError as e:
        sys.exit(f"tinyllama_generate.py --mode alternate: {e}; run it under `trace --start-paused`")
    pct = [(t / u - 1) * 100 for u, t in zip(untraced, recorded)]
    over_before = {}
    if before:
        b = statistics.median(before)
        over_before = {
            "before_ms_per_token": before,
            "before_ms_per_token_median": b,
            "untraced_over_before_pct": (statistics.median(untraced) / b - 1) * 100,
            "traced_over_before_pct": (statistics.median(recorded) / b - 1) * 100,
        }
    return {
        "traced": traced,
        "recorder": "torch.profiler" if profiler else "trace",
        "pairs": a.pairs,
        "new_tokens": a.new_tokens,
        "untraced_ms_per_token": untraced,
        "traced_ms_per_token": recorded,
        "untraced_ms_per_token_median": statistics.median(untraced),
        "traced_ms_per_token_median": statistics.median(recorded),
        "pair_pct": pct,
        "pair_pct_median": statistics.median(pct),
        "untraced_thread_cpu_ms_per_token_median": statistics.median(c for c, _ in cpu[False]),
        "traced_thread_cpu_ms_per_token_median": statistics.median(c for c, _ in cpu[True]),
        "untraced_process_cpu_ms_per_token_median": statistics.median(p for _, p in cpu[False]),
        "traced_process_cpu_ms_per_token_median": statistics.median(p for _, p in cpu[True]),
        "settle_s": a.settle_s,
        "settle_ms_after_untraced_median": statistics.median(settled[False]),
        "settle_ms_after_traced_median": statistics.median(settled[True]),
        "host_control_ms": control_ms,
        **over_before,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=["run", "profile", "alternate"], default="run")
    p.add_argument("--model", help="local folder or Hugging Face id (default: random TinyLlama-1.1B weights)")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prompt-tokens", type=int, default=32)
    p.add_argument("--new-tokens", type=int, default=16)
    p.add_argument("--warmup", type=int, default=2, help="untimed generations first (compilation, graph capture)")
    p.add_argument("--runs", type=int, default=3, help="timed generations")
    p.add_argument("--pairs", type=int, default=6, help="--mode alternate: untraced/traced generation pairs")
    p.add_argument("--before", type=int, default=0,
                   help="--mode alternate: untraced generations timed before the recorder is first "
                        "used, the baseline of a process that never recorded (default 0: none)")
    p.add_argument("--settle-s", type=float, default=0.2,
                   help="--mode alternate: seconds to wait (twice, each followed by a synchronize) after "
                        "each half, outside the timing, for a recorder to finish detaching (default 0.2)")
    p.add_argument("--attach", choices=["injection", "program"], default="injection",
                   help="--mode alternate under `trace`: the CUDA driver loads the tracing library at "
                        "CUDA's start (injection, as `trace` does), or the program loads it once CUDA "
                        "has started (program, as torch.profiler starts CUPTI; python/opbench/trace_control.py)")
    p.add_argument("--recorder", choices=["trace", "profiler"], default="trace",
                   help="--mode alternate: what records the traced half (default: trace, paused between)")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--modules", action="store_true")
    a = p.parse_args()
    if a.compile and a.modules:
        p.error("--modules needs eager mode: module hooks break torch.compile's graphs")
    for name in ("batch", "prompt_tokens", "new_tokens", "runs", "pairs"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if a.before < 0:
        p.error("--before must be 0 or more")
    if a.settle_s < 0:
        p.error("--settle-s must be 0 or more")
    if a.attach == "program":
        if a.mode != "alternate":
            p.error("--attach program is for --mode alternate")
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
        from opbench import trace_control

        if not trace_control.defer_injection():
            p.error("--attach program needs `trace --start-paused` (no library to attach)")

    import torch

    control_ms = host_control_ms(torch)
    if not torch.cuda.is_available():
        sys.exit("tinyllama_generate.py: no CUDA GPU visible to PyTorch")
    model = load_model(a, torch)
    if a.attach == "program":
        trace_control.attach_now()  # CUDA has started: CUPTI attached by the program
    if a.modules:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
        from opbench import trace_modules

        trace_modules.annotate(model, backward=False)
    gen = dict(max_new_tokens=a.new_tokens, min_new_tokens=a.new_tokens, do_sample=False)
    if a.compile:
        import transformers

        model.generation_config.cache_implementation = "static"
        model.generation_config.compile_config = transformers.CompileConfig(
            fullgraph=True, mode="reduce-overhead"
        )
    g = torch.Generator(device="cuda").manual_seed(1)
    ids = torch.randint(0, model.config.vocab_size, (a.batch, a.prompt_tokens), device="cuda", generator=g)
    mask = torch.ones_like(ids)

    def generate():
        out = model.generate(input_ids=ids, attention_mask=mask, **gen)
        if out.shape[1] != a.prompt_tokens + a.new_tokens:
            sys.exit(f"generated {out.shape[1] - a.prompt_tokens} tokens, asked for {a.new_tokens}")

    with torch.no_grad():
        for _ in range(a.warmup):
            generate()
        torch.cuda.synchronize()
        if a.compile and not torch._dynamo.utils.counters["stats"]["unique_graphs"]:
            sys.exit("tinyllama_generate.py: --compile, but generate compiled nothing (transformers did not compile the forward)")
        if a.mode == "alternate":
            print(json.dumps(alternate(a, torch, generate, control_ms)))
            return
        if a.mode == "run":
            ms = []
            torch.cuda.nvtx.range_push("steps")
            for _ in range(a.runs):
                t0 = time.perf_counter()
                generate()
                torch.cuda.synchronize()
                ms.append((time.perf_counter() - t0) * 1e3)
            torch.cuda.nvtx.range_pop()
            print(json.dumps({
                "runs": a.runs,
                "new_tokens": a.new_tokens,
                "ms_per_token_median": statistics.median(ms) / a.new_tokens,
                "ms_per_generation": ms,
                "host_control_ms": control_ms,
            }))
            return
        from torch.profiler import ProfilerActivity, profile

        ms = []
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(a.runs):
                t0 = time.perf_counter()
                generate()
                torch.cuda.synchronize()
                ms.append((time.perf_counter() - t0) * 1e3)
    cuda = torch.autograd.DeviceType.CUDA
    events = [e for e in prof.profiler.kineto_results.events() if e.device_type() == cuda]
    kernels = [e for e in events if not e.name().startswith(("Memcpy", "Memset"))]
    print(json.dumps({
        "kernels": len(kernels),
        "kineto_events_by_category": kineto_categories(prof),
        "kernel_time_us": sum(e.duration_ns() for e in kernels) / 1e3,
        "ms_per_token_median": statistics.median(ms) / a.new_tokens,
        "host_control_ms": control_ms,
    }))


if __name__ == "__main__":
    main()
