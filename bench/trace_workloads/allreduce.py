"""A multi-rank job for `trace`: started by torchrun (one process per GPU), each rank runs a
matrix product and an NCCL all-reduce of its result --steps times, each step in an NVTX range
"step", and checks the sum. Prints one JSON line per rank. Nothing in it knows about `trace`.

    torchrun --nproc_per_node=2 bench/trace_workloads/allreduce.py

NVLink multicast stays off (NCCL_NVLS_ENABLE=0 is set here unless the caller set it)."""

import argparse
import json
import os
import sys

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--n", type=int, default=4096, help="matrix size; the all-reduce moves n*n bf16")
    a = p.parse_args()
    if "RANK" not in os.environ:
        sys.exit("allreduce.py: start it with torchrun (RANK, WORLD_SIZE and the rendezvous come from it)")
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    if torch.cuda.device_count() <= local:
        sys.exit(f"allreduce.py: rank {rank} needs GPU {local}, {torch.cuda.device_count()} visible")
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    g = torch.Generator(device="cuda").manual_seed(rank)
    w = torch.randn(a.n, a.n, device="cuda", dtype=torch.bfloat16, generator=g) / a.n**0.5
    x = torch.randn(a.n, a.n, device="cuda", dtype=torch.bfloat16, generator=g)
    for step in range(a.steps):
        torch.cuda.nvtx.range_push("step")
        y = x @ w
        ones = torch.full((1024,), float(rank + 1), device="cuda")
        dist.all_reduce(y)
        dist.all_reduce(ones)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    want = world * (world + 1) / 2
    ok = bool(torch.all(ones == want).item())
    print(json.dumps({"rank": rank, "world_size": world, "steps": a.steps, "sum_ok": ok}), flush=True)
    dist.destroy_process_group()
    if not ok:
        sys.exit(f"rank {rank}: all-reduce sum wrong")


if __name__ == "__main__":
    main()
