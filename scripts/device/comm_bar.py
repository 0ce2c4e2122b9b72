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
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# comm_peers.py: beside this script where comm.sh carried both to a device, else bench/peers/.
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "bench", "peers")]
from comm_peers import RANK_MEDIANS  # noqa: E402

MIN_BYTES = 256 << 20


def rank_note(notes):
    """The per-rank medians of a row's notes (comm_peers.py rank_medians_note), without the
    label; empty when the row has none."""
    return next((n[len(RANK_MEDIANS):] for n in notes if n.startswith(RANK_MEDIANS)), "")


def medians(artifact):
    """{(collective, dtype, bytes): {implementation: (p50 us, notes)}} of the ok rows."""
    out = {}
    for r in artifact["results"]:
        p = r["params"]
        if r.get("status") != "ok" or p["bytes"] < MIN_BYTES:
            continue
        out.setdefault((p["collective"], p["dtype"], p["bytes"]), {})[r["implementation"]] = (
            r["stats"]["time_us"]["p50"], rank_note(r.get("notes", [])))
    return out


def unaligned_medians(peers):
    return {(r["params"]["collective"], r["params"]["dtype"], r["params"]["bytes"]):
            (statistics.median(r["samples_us"]), rank_note(r.get("notes", [])))
            for r in peers["rows"] if r.get("samples_us")}


def within_count(rows):
    """(points where torch's bus bandwidth is within 5% of NCCL's, points with both)."""
    pairs = [(imps["nccl"][0], imps["torch"][0]) for imps in rows.values()
             if "nccl" in imps and "torch" in imps]
    return sum(n / t >= 0.95 for n, t in pairs), len(pairs)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"comm_bar.py: cannot read {path}: {e}")


def main():
    if len(sys.argv) not in (2, 3):
        raise SystemExit("usage: comm_bar.py ARTIFACT [UNALIGNED_PEERS.json]")
    art = load(sys.argv[1])
    un = unaligned_medians(load(sys.argv[2])) if len(sys.argv) > 2 else {}
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
        print(" ".join(cells), "|", imps["torch"][1],
              ("| unaligned " + un[key][1]) if un.get(key) else "")
    within, total = within_count(rows)
    print(f"torch within 5% of NCCL's bus bandwidth at {within} of {total} points of 256 MiB "
          "and more")


if __name__ == "__main__":
    main()
