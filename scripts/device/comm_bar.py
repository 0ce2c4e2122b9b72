#!/usr/bin/env python3
"""comm_bar.py: torch.distributed against NCCL at 256 MiB and more in one comm artifact: per
point NCCL's median (out of place and, when timed, in place), torch's, torch's bus bandwidth as
a fraction of NCCL's (the same bytes, so the inverse ratio of the medians), each torch row's
per-rank medians, and the points within 5%.

    python3 comm_bar.py ARTIFACT [UNALIGNED_PEERS.json]

The optional second file is comm_peers.py's raw output of a --no-align run at the same points:
its medians are printed beside the merged torch rows.
"""
import json
import statistics
import sys

MIN_BYTES = 256 << 20


def medians(artifact):
    """{(collective, dtype, bytes): {implementation: (p50 us, notes)}} of the ok rows."""
    out = {}
    for r in artifact["results"]:
        p = r["params"]
        if r.get("status") != "ok" or p["bytes"] < MIN_BYTES:
            continue
        note = next((n for n in r.get("notes", []) if n.startswith("each rank's own median")), "")
        out.setdefault((p["collective"], p["dtype"], p["bytes"]), {})[r["implementation"]] = (
            r["stats"]["time_us"]["p50"], note)
    return out


def unaligned_medians(peers):
    return {(r["params"]["collective"], r["params"]["dtype"], r["params"]["bytes"]):
            (statistics.median(r["samples_us"]), next(iter(r.get("notes", [])), ""))
            for r in peers["rows"] if r.get("samples_us")}


def within_count(rows):
    """(points where torch's bus bandwidth is within 5% of NCCL's, points with both)."""
    pairs = [(imps["nccl"][0], imps["torch"][0]) for imps in rows.values()
             if "nccl" in imps and "torch" in imps]
    return sum(n / t >= 0.95 for n, t in pairs), len(pairs)


def main():
    art = json.load(open(sys.argv[1]))
    un = unaligned_medians(json.load(open(sys.argv[2]))) if len(sys.argv) > 2 else {}
    rows = medians(art)
    print("collective dtype MiB nccl_us inplace_us torch_us torch/nccl"
          + (" unaligned_us unaligned/nccl" if un else "") + " | torch per-rank medians")
    for key in sorted(rows):
        imps = rows[key]
        if "nccl" not in imps or "torch" not in imps:
            continue
        n, t = imps["nccl"][0], imps["torch"][0]
        ratio = n / t
        cells = [key[0], key[1], str(key[2] >> 20), f"{n:.1f}",
                 f"{imps['nccl-inplace'][0]:.1f}" if "nccl-inplace" in imps else "-",
                 f"{t:.1f}", f"{ratio:.3f}"]
        if un:
            u = un.get(key)
            cells += [f"{u[0]:.1f}", f"{n / u[0]:.3f}"] if u else ["-", "-"]
        print(" ".join(cells), "|", imps["torch"][1].split(": ", 1)[-1],
              ("| unaligned " + un[key][1].split(": ", 1)[-1]) if un.get(key) else "")
    within, total = within_count(rows)
    print(f"torch within 5% of NCCL's bus bandwidth at {within} of {total} points of 256 MiB "
          "and more")


if __name__ == "__main__":
    main()
