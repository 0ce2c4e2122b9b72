#!/usr/bin/env python3
"""torch_graph_llm.py: the plain-PyTorch CUDA-graph peer of llm_bench (the gpt-fast recipe).

The same Llama weights that `llm_bench --save-weights DIR` wrote (DIR/<config>/{config.json,
model.safetensors, parity.safetensors}), run by a small PyTorch model of our own: fused q/k/v and
gate/up matrices, a static KV cache, the decode step (embedding to argmax, the token and position
read from and written back to device tensors) captured once in a torch.cuda.CUDAGraph and
replayed every step; prefill runs eagerly. Timed like llm_bench and the transformers peer: warm-up,
repeats, the new tokens copied to the host every step, the device synchronized before every clock
read. Rows have `implementation = torch-cudagraph`; `llm_bench --merge FILE --parity-dir DIR`
adds them to the artifact (statistics and the bandwidth bound come from the same Rust code as
candle's rows) and checks this model's prompt logits (DIR/<config>/logits-torch-cudagraph.
safetensors) against the transformers peer's.

Before timing a point, one captured step's logits are compared with the same step run eagerly
(relative L2 error < 1e-2); a point that fails is written as failed, with no timings.
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from transformers_llm import DTYPES, ints, point_params  # noqa: E402

IMPL = "torch-cudagraph"
COMPILED_IMPL = "torch-compile-cudagraph"
GRAPH_TOLERANCE = 1e-2


class Llama:
    """Llama forward over a static KV cache; tensors only, no nn.Module machinery."""

    def __init__(self, folder, dtype, batch, max_ctx):
        import torch
        from safetensors.torch import load_file

        cfg = json.loads((folder / "config.json").read_text())
        self.cfg = cfg
        w = {k: v.to("cuda", dtype) for k, v in load_file(str(folder / "model.safetensors")).items()}
        self.h = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.kv_heads = cfg["num_key_value_heads"]
        self.head_dim = cfg.get("head_dim") or self.h // self.heads
        self.eps = cfg["rms_norm_eps"]
        self.embed = w["model.embed_tokens.weight"]
        self.norm = w["model.norm.weight"]
        self.lm_head = w.get("lm_head.weight", self.embed)
        self.layers = []
        for i in range(cfg["num_hidden_layers"]):
            p = f"model.layers.{i}"
            a = lambda n: w.pop(f"{p}.{n}.weight")
            self.layers.append(dict(
                ln1=a("input_layernorm"), ln2=a("post_attention_layernorm"),
                qkv=torch.cat([a("self_attn.q_proj"), a("self_attn.k_proj"), a("self_attn.v_proj")]),
                o=a("self_attn.o_proj"),
                gate_up=torch.cat([a("mlp.gate_proj"), a("mlp.up_proj")]),
                down=a("mlp.down_proj")))
        self.param_count = sum(t.numel() for t in self._weights())
        self.weight_bytes = sum(t.numel() * t.element_size() for t in self._weights())
        shape = (batch, self.kv_heads, max_ctx, self.head_dim)
        self.k_cache = [torch.zeros(shape, device="cuda", dtype=dtype) for _ in self.layers]
        self.v_cache = [torch.zeros(shape, device="cuda", dtype=dtype) for _ in self.layers]
        inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, self.head_dim, 2, device="cuda").float() / self.head_dim))
        freqs = torch.outer(torch.arange(max_ctx, device="cuda").float(), inv)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.cos, self.sin = emb.cos().to(dtype), emb.sin().to(dtype)
        self.positions = torch.arange(max_ctx, device="cuda")

    def _weights(self):
        yield self.embed
        yield self.norm
        if self.lm_head is not self.embed:
            yield self.lm_head
        for l in self.layers:
            yield from l.values()

    def rms(self, x, wt):
        import torch

        xf = x.float()
        return wt * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)

    def rope(self, x, pos):
        import torch

        cos, sin = self.cos[pos][None, None], self.sin[pos][None, None]
        half = x.shape[-1] // 2
        rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rot * sin

    def forward(self, tok, pos):
        """tok: [B, S] token ids, pos: [S] their positions (device tensors). Returns the last
        position's logits [B, vocab]; writes the cache at `pos`."""
        import torch
        import torch.nn.functional as F

        b, s = tok.shape
        hd, nh, nkv = self.head_dim, self.heads, self.kv_heads
        mask = (self.positions[None, :] <= pos[:, None])[None, None]  # [1, 1, S, T]
        x = F.embedding(tok, self.embed)
        for l, kc, vc in zip(self.layers, self.k_cache, self.v_cache):
            qkv = F.linear(self.rms(x, l["ln1"]), l["qkv"])
            q, k, v = qkv.split([nh * hd, nkv * hd, nkv * hd], dim=-1)
            q = self.rope(q.view(b, s, nh, hd).transpose(1, 2), pos)
            k = self.rope(k.view(b, s, nkv, hd).transpose(1, 2), pos)
            kc.index_copy_(2, pos, k)
            vc.index_copy_(2, pos, v.view(b, s, nkv, hd).transpose(1, 2))
            rep = nh // nkv
            att = F.scaled_dot_product_attention(
                q, kc.repeat_interleave(rep, dim=1), vc.repeat_interleave(rep, dim=1), attn_mask=mask)
            x = x + F.linear(att.transpose(1, 2).reshape(b, s, nh * hd), l["o"])
            gate, up = F.linear(self.rms(x, l["ln2"]), l["gate_up"]).chunk(2, dim=-1)
            x = x + F.linear(F.silu(gate) * up, l["down"])
        return F.linear(self.rms(x[:, -1], self.norm), self.lm_head)


class GraphDecoder:
    """The decode step captured once: reads tok/pos, writes the next tokens into tok, pos += 1.
    compiled: the step's forward goes through torch.compile (inductor, fused Triton kernels) before
    the capture, as gpt-fast does; otherwise the graph replays PyTorch's eager kernels."""

    def __init__(self, model, batch, start_pos, compiled=False):
        import torch

        self.m = model
        self.tok = torch.zeros((batch, 1), device="cuda", dtype=torch.long)
        self.pos = torch.full((1,), start_pos, device="cuda", dtype=torch.long)
        self.logits = None
        self.forward = torch.compile(model.forward, fullgraph=True, dynamic=False) if compiled else model.forward
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self._step()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self._step()

    def _step(self):
        self.logits = self.forward(self.tok, self.pos)
        self.tok.copy_(self.logits.argmax(-1, keepdim=True))
        self.pos.add_(1)

    def prefill(self, ids):
        """ids: [B, P] on the device. Returns the first new tokens (device)."""
        import torch

        p = ids.shape[1]
        nxt = self.m.forward(ids, torch.arange(p, device="cuda")).argmax(-1, keepdim=True)
        self.tok.copy_(nxt)
        self.pos.fill_(p)
        return nxt


def graph_matches_eager(dec, ids):
    """One captured step against the same step run eagerly: relative L2 error of the logits."""
    import torch

    dec.prefill(ids)
    eager = dec.m.forward(dec.tok, dec.pos).float()
    dec.graph.replay()
    got = dec.logits.float()
    torch.cuda.synchronize()
    return float((got - eager).norm() / eager.norm().clamp_min(1e-30))


def generate(dec, ids_host, new_tokens):
    """One repeat, timed like llm_bench's loop; returns the RepeatTimes dict it reads."""
    import torch

    ms = lambda t: (time.perf_counter() - t) * 1e3
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    tok = dec.prefill(ids_host.to("cuda")).cpu()
    torch.cuda.synchronize()
    ttft = ms(t0)
    steps, enqueue = [], []
    for _ in range(1, new_tokens):
        ts = time.perf_counter()
        dec.graph.replay()
        enqueue.append(ms(ts))
        tok = dec.tok.cpu()
        torch.cuda.synchronize()
        steps.append(ms(ts))
    del tok
    return dict(ttft_ms=ttft, step_ms=steps, enqueue_ms=enqueue, e2e_ms=ms(t0), peak_mem_bytes=None)


def measure_point(a, folder, name, dtype, b, p, ids, compiled):
    """One generate row: the captured step checked against eager, then warm-up and repeats."""
    import torch

    imp = COMPILED_IMPL if compiled else IMPL
    m = Llama(folder, dtype, b, p + a.new_tokens)
    cfg = dict(m.cfg, param_count=m.param_count)
    params = point_params(name, cfg, a.dtype, b, p, a.new_tokens)
    params["harness"] = "opbench-loop"
    params["mem_sampled"] = False
    row = {"benchmark": "generate", "implementation": imp, "params": params}
    try:
        t = time.perf_counter()
        dec = GraphDecoder(m, b, p, compiled)
        setup_s = time.perf_counter() - t
        err = graph_matches_eager(dec, ids.to("cuda"))
        check = (f"captured step vs the same step eager: logits rel L2 error {err:.2e} "
                 f"(tolerance {GRAPH_TOLERANCE:.0e}); compile + capture took {setup_s:.1f} s")
        if not err <= GRAPH_TOLERANCE:
            print(f"[{imp}] {name} b={b}: FAILED {check}", file=sys.stderr, flush=True)
            return dict(row, status="failed", notes=[check])
        for _ in range(a.warmup):
            generate(dec, ids, a.new_tokens)
        torch.cuda.reset_peak_memory_stats()
        reps = [generate(dec, ids, a.new_tokens) for _ in range(a.repeats)]
    except torch.OutOfMemoryError as e:
        return dict(row, status="skipped", notes=[f"out of memory: {e}"])
    finally:
        dec = None
        torch.cuda.empty_cache()
    r = reps[len(reps) // 2]
    st = sorted(r["step_ms"])
    print(f"[{imp}] {name} P={p} b={b}: ttft {r['ttft_ms']:.2f} ms, step p50 {st[len(st) // 2]:.3f} ms",
          file=sys.stderr, flush=True)
    return dict(row, warmup=a.warmup, repeats=reps,
                metrics={"peak_allocator_bytes": float(torch.cuda.max_memory_allocated()),
                         "weight_bytes": float(m.weight_bytes)},
                notes=[check, "peak_allocator_bytes: torch.cuda.max_memory_allocated over the repeats"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights-dir", type=Path, required=True, help="llm_bench --save-weights folder")
    ap.add_argument("--configs", default="", help="comma list of sub-folders (default: all)")
    ap.add_argument("--batch", type=ints, default=[1])
    ap.add_argument("--batch-for", action="append", default=[], metavar="CONFIG=B1,B2",
                    help="batch list for one config (overrides --batch for it)")
    ap.add_argument("--prompt-len", type=ints, default=[128])
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="f16")
    ap.add_argument("--compile-configs", default="", metavar="C1,C2",
                    help=f"configs also measured with the step through torch.compile before the "
                    f"capture (rows {COMPILED_IMPL}; each batch compiles once, ~1 min)")
    ap.add_argument("--out", type=Path, required=True, help="rows file for llm_bench --merge")
    a = ap.parse_args()
    if a.repeats < 1 or a.new_tokens < 2:
        raise SystemExit("--repeats must be >= 1 and --new-tokens >= 2")
    if not a.weights_dir.is_dir():
        raise SystemExit(f"--weights-dir {a.weights_dir}: not a folder (run llm_bench --save-weights first)")

    import torch
    from safetensors.torch import load_file, save_file

    dtype = getattr(torch, DTYPES[a.dtype])
    names = [c for c in a.configs.split(",") if c] or sorted(
        d.name for d in a.weights_dir.iterdir() if (d / "config.json").is_file())
    if not names:
        raise SystemExit(f"--weights-dir {a.weights_dir}: no <config>/config.json inside")
    per_config = dict(kv.split("=", 1) for kv in a.batch_for)
    rows = []
    notes = [f"peer {IMPL}: torch {torch.__version__}, plain PyTorch Llama (fused qkv and gate/up), "
             "static KV cache, decode step captured once in torch.cuda.CUDAGraph (token and "
             "position on the device), eager prefill, greedy argmax, tokens on the host every step; "
             f"{COMPILED_IMPL}: the same with the step's forward through torch.compile (inductor, "
             "fullgraph, static shapes) before the capture"]
    compile_for = {c for c in a.compile_configs.split(",") if c}
    for name in names:
        folder = a.weights_dir / name
        with torch.no_grad():
            par = load_file(str(folder / "parity.safetensors"))
            pids = par["input_ids"].to(torch.long).to("cuda")
            m = Llama(folder, dtype, 1, pids.shape[1] + 1)
            logits = m.forward(pids, torch.arange(pids.shape[1], device="cuda")).float().cpu().contiguous()
            save_file({"logits": logits}, str(folder / f"logits-{IMPL}.safetensors"))
            del m
            g = torch.Generator().manual_seed(4321)
            batches = ints(per_config[name]) if name in per_config else a.batch
            for p in a.prompt_len:
                for b in batches:
                    ids = torch.randint(3, json.loads((folder / "config.json").read_text())["vocab_size"],
                                        (b, p), generator=g)
                    for compiled in [False, True] if name in compile_for else [False]:
                        rows.append(measure_point(a, folder, name, dtype, b, p, ids, compiled))
        torch.cuda.empty_cache()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_name(a.out.name + ".partial")
    tmp.write_text(json.dumps({"rows": rows, "notes": notes}, indent=1))
    tmp.replace(a.out)
    print(f"[torch-graph peer] wrote {len(rows)} row(s) to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
