"""A Triton kernel script for `trace` (scripts/device/trace_workloads.sh): the Triton tutorial's
fused row softmax, checked against torch.softmax, then launched --launches times inside an NVTX
range "steps". Prints JSON with the launches made. Nothing in it knows about `trace`."""

import argparse
import json
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_stride + offs, num / tl.sum(num, axis=0), mask=mask)


def softmax(x):
    rows, cols = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    softmax_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=block, num_warps=min(max(block // 256, 1), 8))
    return y


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", type=int, default=2048)
    p.add_argument("--launches", type=int, default=100)
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("triton_softmax.py: no CUDA GPU visible to PyTorch")
    torch.manual_seed(0)
    x = torch.randn(a.rows, a.cols, device="cuda")
    err = (softmax(x) - torch.softmax(x, dim=1)).abs().max().item()
    if not err < 1e-5:
        sys.exit(f"triton_softmax.py: max abs error {err} against torch.softmax")
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("steps")
    for _ in range(a.launches):
        softmax(x)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(json.dumps({"launches": a.launches, "max_abs_err": err, "triton": triton.__version__}))


if __name__ == "__main__":
    main()
