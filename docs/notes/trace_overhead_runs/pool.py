"""Pools the in-process overhead pairs of several calls of scripts/device/trace_inprocess.sh.

    python3 docs/notes/trace_overhead_runs/pool.py [CALL_DIR ...]   (default: call3 call4 call5)

Each CALL_DIR holds the per-process JSON files (VARIANT.ROUND.json) of one call. Prints, per
variant, the number of pairs and the median of all of them, each call's median, each call's
mean over processes of the untraced and traced halves' ms per token, and for every
variant against `profiler-teardown` (torch.profiler detached between profiles, the reference)
the difference of the pooled medians with a 95% bootstrap interval. The bootstrap keeps the
design: within each call it resamples that variant's processes, then pairs within each drawn
process, so the interval carries both the spread between processes and the spread of pairs."""

import json
import random
import statistics
import sys
from pathlib import Path

REFERENCE = "profiler-teardown"
# What each per-process JSON must hold.
FIELDS = ("pair_pct", "untraced_ms_per_token_median", "traced_ms_per_token_median")


def load(dirs):
    """({variant: {call: [[pair_pct of one process], ...]}},
    {variant: {call: [(untraced, traced ms per token medians of one process), ...]}})"""
    pairs, halves = {}, {}
    for d in dirs:
        for f in sorted(Path(d).glob("*.json")):
            variant = f.name.rsplit(".", 2)[0]
            try:
                r = json.loads(f.read_text())
            except ValueError as e:
                sys.exit(f"pool.py: {f} is not JSON ({e})")
            missing = [k for k in FIELDS if not isinstance(r, dict) or k not in r]
            if missing:
                sys.exit(f"pool.py: {f} lacks {', '.join(missing)}: not a --mode alternate "
                         "result of tinyllama_generate.py")
            pairs.setdefault(variant, {}).setdefault(str(d), []).append(r["pair_pct"])
            ms = (r["untraced_ms_per_token_median"], r["traced_ms_per_token_median"])
            halves.setdefault(variant, {}).setdefault(str(d), []).append(ms)
    return pairs, halves


def pooled(calls):
    return [p for procs in calls.values() for proc in procs for p in proc]


def resample(calls, rng):
    """One bootstrap draw of a variant's pooled median."""
    drawn = []
    for procs in calls.values():
        for _ in procs:
            proc = rng.choice(procs)
            drawn.extend(rng.choice(proc) for _ in proc)
    return statistics.median(drawn)


def main():
    here = Path(__file__).resolve().parent
    dirs = [Path(a) for a in sys.argv[1:]] or [here / c for c in ("call3", "call4", "call5")]
    data, halves = load(dirs)
    if not data:
        sys.exit(f"pool.py: no VARIANT.ROUND.json files in {', '.join(map(str, dirs))}")
    for variant, calls in sorted(data.items()):
        per_call = ", ".join(f"{statistics.median(pooled({c: p})):+.1f}" for c, p in calls.items())
        ms = ", ".join(
            f"{statistics.mean(u for u, _ in procs):.1f} -> {statistics.mean(t for _, t in procs):.1f}"
            for procs in halves[variant].values()
        )
        all_pairs = pooled(calls)
        print(f"{variant}: {len(all_pairs)} pairs, median {statistics.median(all_pairs):+.2f}% "
              f"(per call {per_call}); ms/token untraced -> traced, per call: {ms}")
    if REFERENCE not in data:
        return
    rng = random.Random(1)
    ref = data[REFERENCE]
    for variant, calls in sorted(data.items()):
        if variant == REFERENCE or set(calls) != set(ref):
            continue
        diff = statistics.median(pooled(calls)) - statistics.median(pooled(ref))
        draws = sorted(resample(calls, rng) - resample(ref, rng) for _ in range(4000))
        print(f"{variant} - {REFERENCE}: {diff:+.2f} points, 95% bootstrap interval "
              f"{draws[100]:+.1f} to {draws[3899]:+.1f}")


if __name__ == "__main__":
    main()
