"""An eager PyTorch training step to trace: a small GPT (token embedding, pre-norm blocks of
attention and MLP, tied-free LM head), cross-entropy loss, AdamW. Every step is
`forward` / `backward` / `optimizer` NVTX ranges inside a `step` range, and the timed steps sit
inside a `timed` range; modules get forward and backward ranges (opbench.trace_modules).

    trace --start-paused --out out/train -- python3 train_step.py            # traced
    python3 train_step.py --profile prof.json                                # torch.profiler

Warm-up steps run first; under `trace --start-paused` recording starts (trace_control.resume)
just before the timed steps and stops after them, so the trace holds exactly the timed steps.
`--profile FILE` instead records the same timed steps with torch.profiler (CUDA activities) and
writes its kernel count and summed kernel time to FILE, for comparing in a separate process.
The last stdout line is JSON: the timed steps' wall times (ms), measured with CUDA
synchronisation around each step.
No inplace operations on module outputs: full backward hooks refuse them."""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from opbench import trace_control, trace_modules  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(self.act(self.up(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, vocab, d, layers, heads, seq):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.Sequential(*[Block(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        return self.head(self.ln_f(self.blocks(self.tok(ids) + self.pos(pos))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=5, help="timed steps (default 5)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first (default 3)")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--no-modules", action="store_true", help="no module ranges")
    ap.add_argument("--profile", metavar="FILE", help="torch.profiler over the timed steps")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("train_step.py: no CUDA device: this workload trains on the GPU")
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = Gpt(a.vocab, a.dim, a.layers, 8, a.seq).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    if not a.no_modules:
        trace_modules.annotate(model)
    ids = torch.randint(0, a.vocab, (a.batch, a.seq), device=dev)
    targets = torch.randint(0, a.vocab, (a.batch, a.seq), device=dev)
    nvtx = torch.cuda.nvtx

    def step():
        nvtx.range_push("step")
        nvtx.range_push("forward")
        logits = model(ids)
        loss = F.cross_entropy(logits.view(-1, a.vocab), targets.view(-1))
        nvtx.range_pop()
        nvtx.range_push("backward")
        loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        opt.step()
        opt.zero_grad(set_to_none=True)
        nvtx.range_pop()
        nvtx.range_pop()
        return loss

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()

    prof = None
    if a.profile:
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CUDA])
        prof.__enter__()
    trace_control.resume()
    nvtx.range_push("timed")
    times_ms = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        loss = step()
        torch.cuda.synchronize()
        times_ms.append((time.perf_counter() - t0) * 1e3)
    nvtx.range_pop()
    torch.cuda.synchronize()
    trace_control.pause()
    if prof is not None:
        prof.__exit__(None, None, None)
        # The kineto records themselves (as tinyllama_generate.py counts): every CUDA-device
        # event that is not a copy or a memset is a kernel.
        cuda = torch.autograd.DeviceType.CUDA
        events = [e for e in prof.profiler.kineto_results.events() if e.device_type() == cuda]
        kernels = [e for e in events if not e.name().startswith(("Memcpy", "Memset"))]
        Path(a.profile).write_text(
            json.dumps(
                {
                    "kernels": len(kernels),
                    "kernel_time_us": sum(e.duration_ns() for e in kernels) / 1e3,
                    "steps": a.steps,
                }
            )
        )
    print(json.dumps({"step_ms": times_ms, "loss": loss.item(), "steps": a.steps}))


if __name__ == "__main__":
    main()
