"""Synthetic raw trace files at scale, for `trace --from-raw` and the dashboard: PROCS processes
(one raw file each, as `trace` writes them) of KERNELS kernels each, every kernel with its
cudaLaunchKernel call and inside an NVTX range per 10 kernels; 20 kernel names; every tenth
process killed (no `E` line) so completeness is exercised. Line format: src/trace/rawfmt.rs.

    python3 scripts/trace_scale.py DIR [--procs 1000000] [--kernels 10]
    trace --from-raw DIR --out OUT --name scale

About 1.1 KB per process at the defaults (1.1 GB for a million files)."""

import argparse
import os
import sys

NAMES = [f"_Z{8 + i}kernel_{i:02d}Pfi" for i in range(20)]


def process_text(pid, kernels):
    out = [f"H\t1\t{pid}\t130001"]
    out += [f"N\t{i}\t{n}" for i, n in enumerate(NAMES)]
    launch = len(NAMES)
    rng = launch + 1
    out.append(f"N\t{launch}\tcudaLaunchKernel")
    out.append(f"N\t{rng}\tstep")
    out.append("G\t0\tNVIDIA H200\t9\t0\t132\t150000000000")
    t = 1_000_000 + (pid % 997) * 1000
    step_start = t
    for k in range(kernels):
        name = (pid + k) % len(NAMES)
        dur = 2000 + 37 * name
        corr = k + 1
        out.append(f"R\t{t}\t{t + 900}\t{pid}\t{corr}\t211\t0\t{launch}")
        out.append(f"K\t{t + 1500}\t{t + 1500 + dur}\t0\t7\t{corr}\t128\t1\t1\t256\t1\t1\t32\t0\t0\t0\t{name}\t0")
        t += 1500 + dur + 300
        if k % 10 == 9 or k == kernels - 1:
            out.append(f"P\t{step_start}\t{t}\t{pid}\t{pid}\t1\t{rng}")
            step_start = t
    out.append("D\t0")
    if pid % 10 != 0:
        out.append("E\texit")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--procs", type=int, default=1_000_000)
    ap.add_argument("--kernels", type=int, default=10, help="kernels per process")
    a = ap.parse_args()
    if a.procs < 1 or a.kernels < 1:
        sys.exit("trace_scale.py: --procs and --kernels must be at least 1")
    os.makedirs(a.dir, exist_ok=True)
    for pid in range(1, a.procs + 1):
        with open(os.path.join(a.dir, f"trace-{pid}.raw"), "w") as f:
            f.write(process_text(pid, a.kernels))
        if pid % 100_000 == 0:
            print(f"trace_scale.py: {pid} of {a.procs} processes written", file=sys.stderr)
    print(f"trace_scale.py: {a.procs} processes, {a.procs * a.kernels} kernels in {a.dir}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
