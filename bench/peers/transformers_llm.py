#!/usr/bin/env python3
"""transformers_llm.py: the HF transformers (eager) peer of llm_bench, same weights, same points.

Reads the models llm_bench saved with --save-weights DIR (DIR/<config>/{config.json,
model.safetensors, parity.safetensors}), measures prefill + greedy decode exactly like llm_bench
(warm-up, repeats, the device synchronized before every clock read, the new tokens copied to the
host every step), writes DIR/<config>/peer_logits.safetensors for the parity check (and
peer_logits-<impl>.safetensors at the decode steps an implementation saved) and a rows
file that `llm_bench --merge FILE --parity-dir DIR` adds to artifacts/llm.json. Statistics and
the bandwidth bound are computed there, by the same Rust code as candle's rows.

Also: --profile-step K runs torch.profiler over one decode step (first config, batch 1) and
--ncu-csv FILE turns an `ncu --csv` log of one candle decode step into a profile row.
"""

import argparse
import csv
import json
import sys
import time
from pathlib import Path

DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}


def load_model(folder, dtype_name):
    import torch
    from transformers import LlamaForCausalLM

    dtype = getattr(torch, DTYPES[dtype_name])
    kw = dict(attn_implementation="eager")
    try:
        model = LlamaForCausalLM.from_pretrained(folder, dtype=dtype, **kw)
    except TypeError:  # transformers < 4.56 spells it torch_dtype
        model = LlamaForCausalLM.from_pretrained(folder, torch_dtype=dtype, **kw)
    return model.to("cuda").eval()


def mem_used():
    import torch

    free, total = torch.cuda.mem_get_info()
    return total - free


def generate(model, ids, new_tokens, mem=True):
    """One repeat of our own loop (like llm_bench's); returns the RepeatTimes dict it reads."""
    import torch

    ms = lambda t: (time.perf_counter() - t) * 1e3
    mem_used_ = mem_used if mem else (lambda: 0)
    peak = mem_used_()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    inp = ids.to("cuda", non_blocking=False)
    out = model(input_ids=inp, use_cache=True, logits_to_keep=1)
    past = out.past_key_values
    nxt = out.logits[:, -1, :].argmax(-1, keepdim=True)
    peak = max(peak, mem_used_())
    tok = nxt.cpu()
    torch.cuda.synchronize()
    ttft = ms(t0)
    steps, enqueue = [], []
    for _ in range(1, new_tokens):
        ts = time.perf_counter()
        inp = tok.to("cuda")
        out = model(input_ids=inp, past_key_values=past, use_cache=True, logits_to_keep=1)
        past = out.past_key_values
        nxt = out.logits[:, -1, :].argmax(-1, keepdim=True)
        enqueue.append(ms(ts))
        peak = max(peak, mem_used_())
        tok = nxt.cpu()
        torch.cuda.synchronize()
        steps.append(ms(ts))
    return dict(ttft_ms=ttft, step_ms=steps, enqueue_ms=enqueue, e2e_ms=ms(t0), peak_mem_bytes=int(peak) if mem else None)


def hf_generate(model, ids, new_tokens):
    """One repeat of model.generate() (greedy, eager attention, DynamicCache), timed per token
    through a streamer: generate() hands each step's tokens to put() after copying them to the host."""
    import torch
    from transformers.generation.streamers import BaseStreamer

    class Clock(BaseStreamer):
        def __init__(self):
            self.t = []

        def put(self, value):
            self.t.append(time.perf_counter())

        def end(self):
            pass

    clock = Clock()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    inp = ids.to("cuda")
    out = model.generate(inp, attention_mask=torch.ones_like(inp), max_new_tokens=new_tokens,
                         min_new_tokens=new_tokens, do_sample=False, streamer=clock, pad_token_id=0)
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    if out.shape[1] != ids.shape[1] + new_tokens:
        raise SystemExit(f"generate() made {out.shape[1] - ids.shape[1]} tokens, expected {new_tokens}")
    # put() #0 is the prompt, #1 the first new token (TTFT), then one per decode step.
    tok = clock.t[1:]
    return dict(ttft_ms=(tok[0] - t0) * 1e3, step_ms=[(b - a) * 1e3 for a, b in zip(tok, tok[1:])],
                enqueue_ms=[], e2e_ms=(t_end - t0) * 1e3, peak_mem_bytes=None)


def profile_step(model, ids, step):
    """torch.profiler over decode step `step` of one generation: kernel count and times."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    inp = ids.to("cuda")
    out = model(input_ids=inp, use_cache=True, logits_to_keep=1)
    past = out.past_key_values
    tok = out.logits[:, -1, :].argmax(-1, keepdim=True).cpu()
    for s in range(1, step + 1):
        torch.cuda.synchronize()
        if s < step:
            out = model(input_ids=tok.to("cuda"), past_key_values=past, use_cache=True, logits_to_keep=1)
            past = out.past_key_values
            tok = out.logits[:, -1, :].argmax(-1, keepdim=True).cpu()
            continue
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            t = time.perf_counter()
            out = model(input_ids=tok.to("cuda"), past_key_values=past, use_cache=True, logits_to_keep=1)
            tok = out.logits[:, -1, :].argmax(-1, keepdim=True).cpu()
            torch.cuda.synchronize()
            wall = (time.perf_counter() - t) * 1e3
    kernels = []
    for e in prof.events():
        if str(e.device_type).endswith("CUDA") and not e.name.startswith(("Memcpy", "Memset")):
            kernels.append((e.name, e.time_range.start, e.time_range.end - e.time_range.start))
    return summarize_kernels(kernels, wall)


def summarize_kernels(kernels, wall_ms=None):
    """kernels: (name, start_us or None, duration_us); ncu gives durations only."""
    busy_us = sum(d for _, _, d in kernels)
    by_name = {}
    for n, _, d in kernels:
        c, t = by_name.get(n, (0, 0.0))
        by_name[n] = (c + 1, t + d)
    top = sorted(by_name.items(), key=lambda kv: -kv[1][1])[:8]
    metrics = {
        "kernels_per_step": float(len(kernels)),
        "kernel_time_per_step_ms": busy_us / 1e3,
        "distinct_kernels": float(len(by_name)),
    }
    if wall_ms is not None:
        metrics["profiled_step_wall_ms"] = wall_ms
    if kernels and all(s is not None for _, s, _ in kernels):
        span = max(s + d for _, s, d in kernels) - min(s for _, s, _ in kernels)
        metrics["gpu_span_ms"] = span / 1e3
    notes = [
        "top kernels by time: "
        + "; ".join(f"{n[:80]} x{c} {t / 1e3:.3f} ms" for n, (c, t) in top)
    ]
    return metrics, notes


UNIT_TO_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}


def parse_ncu_csv(path):
    """Per-kernel gpu__time_duration.sum from an `ncu --csv` log: list of (name, None, duration_us)."""
    lines = Path(path).read_text(errors="replace").splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        raise SystemExit(f"{path}: no ncu CSV header (a line starting with \"ID\") found")
    rows = csv.DictReader(lines[start:])
    kernels = []
    for r in rows:
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        unit = (r.get("Metric Unit") or "ns").strip()
        if unit not in UNIT_TO_US:
            raise SystemExit(f"{path}: unknown time unit {unit!r}")
        v = float(r["Metric Value"].replace(",", "")) * UNIT_TO_US[unit]
        kernels.append((r.get("Kernel Name", "?"), None, v))
    if not kernels:
        raise SystemExit(f"{path}: no gpu__time_duration.sum rows: was ncu run with --metrics gpu__time_duration.sum?")
    return kernels


def point_params(name, cfg, dtype, batch, p, t):
    return {
        "model": name,
        "weights": "random",
        "source": "random",
        "dtype": dtype,
        "device": "cuda",
        "batch": batch,
        "prompt_len": p,
        "new_tokens": t,
        "param_count": cfg["param_count"],
        "layers": cfg["num_hidden_layers"],
        "hidden_size": cfg["hidden_size"],
    }


def ints(s):
    return [int(x) for x in s.split(",") if x]


def save_step_logits(model, folder, prompt_len):
    """For each DIR/<config>/logits-<impl>.safetensors that names the sequence its decode steps
    ran on (`input_ids`: the prompt, then the tokens fed to each step), this model's logits at
    the same positions (the prompt's last one, then each step's) in one forward pass over the
    whole sequence, as peer_logits-<impl>.safetensors."""
    import torch
    from safetensors.torch import load_file, save_file

    for f in sorted(folder.glob("logits-*.safetensors")):
        t = load_file(str(f))
        if "input_ids" not in t:
            continue
        seq = t["input_ids"].to(torch.long).to("cuda")
        if seq.shape[-1] < prompt_len:
            raise SystemExit(f"{f}: input_ids shorter than the {prompt_len}-token prompt")
        out = model(input_ids=seq, use_cache=False).logits[0, prompt_len - 1:, :]
        imp = f.name[len("logits-"):-len(".safetensors")]
        save_file({"logits": out.float().cpu().contiguous()},
                  str(folder / f"peer_logits-{imp}.safetensors"))
        print(f"[peer] {folder.name}: {imp}'s {out.shape[0] - 1} decode steps' logits",
              file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights-dir", type=Path, help="llm_bench --save-weights folder")
    ap.add_argument("--configs", default="", help="comma list of sub-folders (default: all)")
    ap.add_argument("--batch", type=ints, default=[1])
    ap.add_argument("--prompt-len", type=ints, default=[128])
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="f16")
    ap.add_argument("--batch-for", action="append", default=[], metavar="CONFIG=B1,B2",
                    help="batch list for one config (overrides --batch for it)")
    ap.add_argument("--profile-step", type=int, help="torch.profiler over this decode step (--profile-config, batch 1)")
    ap.add_argument("--profile-config", default="tinyllama-1.1b", help="config to profile (default tinyllama-1.1b, else the first)")
    ap.add_argument("--modes", default="loop", help="comma list: loop (our loop, memory sampled like llm_bench), "
                    "loop-nomem (no memory sampling), generate (model.generate timed by a streamer)")
    ap.add_argument("--ncu-csv", type=Path, help="turn this ncu CSV of one candle decode step into a profile row")
    ap.add_argument("--ncu-point", default="tinyllama-1.1b,1,128,128", help="model,batch,P,T the ncu step belongs to")
    ap.add_argument("--out", type=Path, required=True, help="rows file for llm_bench --merge")
    a = ap.parse_args()

    rows, notes = [], []
    if a.ncu_csv:
        name, b, p, t = a.ncu_point.split(",")
        kernels = parse_ncu_csv(a.ncu_csv)
        metrics, knotes = summarize_kernels(kernels)
        rows.append({
            "benchmark": "decode_step_profile", "implementation": "candle",
            "params": {"model": name, "dtype": a.dtype, "device": "cuda", "batch": int(b),
                       "prompt_len": int(p), "new_tokens": int(t), "profiler": "ncu"},
            "metrics": metrics,
            "notes": ["ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum "
                      "over one decode step (cuProfilerStart/Stop); kernels run serialized under ncu"] + knotes,
        })

    if a.weights_dir:
        import torch
        import transformers
        from safetensors.torch import load_file, save_file

        notes.append(f"peer: transformers {transformers.__version__}, torch {torch.__version__}, "
                     f"attn_implementation=eager, logits_to_keep=1, greedy argmax, KV cache (DynamicCache)")
        names = [c for c in a.configs.split(",") if c] or sorted(
            d.name for d in a.weights_dir.iterdir() if (d / "config.json").is_file())
        per_config = dict(kv.split("=", 1) for kv in a.batch_for)
        prof_name = a.profile_config if a.profile_config in names else names[0]
        modes = [m for m in a.modes.split(",") if m]
        for m in modes:
            if m not in ("loop", "loop-nomem", "generate"):
                raise SystemExit(f"--modes: unknown mode {m!r}")
        for ci, name in enumerate(names):
            folder = a.weights_dir / name
            cfg = json.loads((folder / "config.json").read_text())
            model = load_model(folder, a.dtype)
            cfg["param_count"] = sum(p.numel() for p in model.parameters())
            print(f"[peer] {name}: {cfg['param_count']} parameters", file=sys.stderr, flush=True)
            with torch.inference_mode():
                par = load_file(str(folder / "parity.safetensors"))
                ids = par["input_ids"].to(torch.long).to("cuda")
                logits = model(input_ids=ids, use_cache=False).logits[:, -1, :].float().cpu().contiguous()
                save_file({"logits": logits}, str(folder / "peer_logits.safetensors"))
                save_step_logits(model, folder, ids.shape[-1])
                g = torch.Generator().manual_seed(1234)
                batches = ints(per_config[name]) if name in per_config else a.batch
                for p in a.prompt_len:
                    for b in batches:
                        ids = torch.randint(3, cfg["vocab_size"], (b, p), generator=g)
                        for mode in modes:
                            params = point_params(name, cfg, a.dtype, b, p, a.new_tokens)
                            impl = "transformers-generate" if mode == "generate" else "transformers-eager"
                            params["harness"] = "generate()" if mode == "generate" else "opbench-loop"
                            params["mem_sampled"] = mode == "loop"
                            run = {"loop": lambda: generate(model, ids, a.new_tokens),
                                   "loop-nomem": lambda: generate(model, ids, a.new_tokens, mem=False),
                                   "generate": lambda: hf_generate(model, ids, a.new_tokens)}[mode]
                            try:
                                for _ in range(a.warmup):
                                    run()
                                torch.cuda.reset_peak_memory_stats()
                                reps = [run() for _ in range(a.repeats)]
                            except torch.OutOfMemoryError as e:
                                torch.cuda.empty_cache()
                                rows.append({"benchmark": "generate", "implementation": impl,
                                             "status": "skipped", "params": params, "notes": [f"out of memory: {e}"]})
                                continue
                            alloc = float(torch.cuda.max_memory_allocated())
                            rows.append({"benchmark": "generate", "implementation": impl,
                                         "params": params, "warmup": a.warmup, "repeats": reps,
                                         "metrics": {"peak_allocator_bytes": alloc,
                                                     "weight_bytes": float(sum(p.numel() * p.element_size() for p in model.parameters()))},
                                         "notes": ["peak_allocator_bytes: torch.cuda.max_memory_allocated over the repeats"]})
                            r = reps[len(reps) // 2]
                            steps = sorted(r["step_ms"]) or [float("nan")]
                            print(f"[peer] {name} {mode} P={p} b={b}: ttft {r['ttft_ms']:.2f} ms, step p50 "
                                  f"{steps[len(steps) // 2]:.2f} ms", file=sys.stderr, flush=True)
                if a.profile_step and name == prof_name:
                    p = a.prompt_len[0]
                    ids = torch.randint(3, cfg["vocab_size"], (1, p), generator=g)
                    metrics, knotes = profile_step(model, ids, a.profile_step)
                    rows.append({"benchmark": "decode_step_profile", "implementation": "transformers-eager",
                                 "params": dict(point_params(name, cfg, a.dtype, 1, p, a.new_tokens), profiler="torch.profiler"),
                                 "metrics": metrics,
                                 "notes": [f"torch.profiler over decode step {a.profile_step}"] + knotes})
            del model
            torch.cuda.empty_cache()

    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"rows": rows, "notes": notes}, indent=1))
    print(f"[peer] wrote {len(rows)} row(s) to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
