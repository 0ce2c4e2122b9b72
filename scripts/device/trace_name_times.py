"""Where a trace and torch.profiler disagree on kernel time: per kernel name, the mean duration
of the CUDA-graph kernels in a `trace` folder's trace.sqlite against the mean in one or more
profiler JSONs of scripts/device/trace_tool_torch.py (--mode profile, its time_by_name_us).

  python3 scripts/device/trace_name_times.py TRACE_DIR PROFILE.json [PROFILE.json ...]

Prints the names whose difference, times the profiler's count, moves the total most, and the
share of the total difference that a uniform per-kernel offset would explain."""

import json
import sqlite3
import sys
from pathlib import Path


def trace_means(folder):
    db = sqlite3.connect(Path(folder) / "trace.sqlite")
    rows = db.execute(
        "SELECT s.value, COUNT(*), SUM(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName WHERE k.graphId IS NOT NULL AND k.graphId != 0 "
        "GROUP BY s.value"
    ).fetchall()
    return {name: (n, total_ns / n / 1e3) for name, n, total_ns in rows}


def outside_graphs(folder, name):
    """Count, mean and min/median/max (us) of the trace's kernels of `name` outside graphs."""
    db = sqlite3.connect(Path(folder) / "trace.sqlite")
    d = [r[0] / 1e3 for r in db.execute(
        "SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
        "ON s.id = k.demangledName WHERE s.value = ? ORDER BY k.start", (name,))]
    if not d:
        return "none"
    s = sorted(d)
    return (f"{len(d)} x, {sum(d) / len(d):.3f} us mean, min/median/max "
            f"{s[0]:.3f}/{s[len(s) // 2]:.3f}/{s[-1]:.3f}; last 100 mean {sum(d[-100:]) / len(d[-100:]):.3f}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    trace = trace_means(sys.argv[1])
    print(f"trace: {sum(n for n, _ in trace.values())} graph kernels, {len(trace)} names")
    for path in sys.argv[2:]:
        p = json.load(open(path))
        counts, times = p["by_name"], p["time_by_name_us"]
        rows, unmatched = [], 0
        for name, n in counts.items():
            if name not in trace:
                unmatched += n
                continue
            mean_p = times[name] / n
            mean_t = trace[name][1]
            rows.append((name, n, mean_t, mean_p, (mean_t - mean_p) * n))
        total_delta = sum(r[4] for r in rows)
        matched = sum(r[1] for r in rows)
        print(f"\n{path}: {p['kernels']} kernels, {p['kernel_time_us']:.1f} us; "
              f"{unmatched} of them without a graph kernel of that name in the trace")
        print(f"trace - profiler over the matched names: {total_delta:+.1f} us "
              f"({total_delta / matched * 1e3:+.1f} ns per kernel)")
        print(f"{'count':>6} {'trace us':>9} {'prof us':>9} {'diff ns':>8} {'total us':>9}  name")
        for name, n, mt, mp, d in sorted(rows, key=lambda r: -abs(r[4]))[:15]:
            print(f"{n:6d} {mt:9.3f} {mp:9.3f} {(mt - mp) * 1e3:+8.0f} {d:+9.1f}  {name[:90]}")
        spread = p.get("min_median_max_us_by_name", {})
        for name, n in counts.items():
            if name in trace:
                continue
            t = outside_graphs(sys.argv[1], name)
            print(f"outside graphs: {name[:70]}: profiler {n} x, {times[name] / n:.3f} us mean, "
                  f"min/median/max {spread.get(name)}; trace {t}")


if __name__ == "__main__":
    main()
