"""The checks of a traced training step (scripts/device/trace_training.sh), each printing PASS or
FAIL and the figures behind it:
  count     the `timed` range's kernels by window (trace.json) against torch.profiler's over the
            same steps in a separate process: count equal, summed kernel time within 1%
  backward  every kernel launched from a thread other than the one that opened `timed` (the
            autograd thread) was launched inside a `backward` range's span (trace.sqlite)
  modules   >= 95% of the forward and backward kernel time lies in a module range (self kernel
            time of `model*` ranges over the `forward` and `backward` ranges' kernel time by
            window); the optimizer's kernels, in no module, are reported beside it
  overhead  trace.json has its trace_overhead row; beside it, the steps' own median wall time
            traced and untraced from the runs' printed step_ms lines (trace.log)
Usage: python3 trace_training_checks.py TRACE_DIR PROFILE_JSON TRACE_LOG
Exit status: the number of failed checks."""

import json
import sqlite3
import statistics
import sys
from pathlib import Path


def rows(artifact, bench):
    return [r for r in artifact["results"] if r["benchmark"] == bench]


def main():
    trace_dir, prof_path, log_path = (Path(p) for p in sys.argv[1:4])
    art = json.loads((trace_dir / "trace.json").read_text())
    prof = json.loads(prof_path.read_text())
    ranges = {r["params"]["range"]: r["metrics"] for r in rows(art, "trace_range")}
    fails = 0
    summary = {}

    def check(name, ok, text):
        nonlocal fails
        print(f"{'PASS' if ok else 'FAIL'} {name}: {text}")
        fails += 0 if ok else 1
        summary[name] = {"pass": ok, "text": text}

    timed = ranges.get("timed")
    if timed is None:
        check("count", False, "no `timed` range in trace.json")
        return 1
    n, t = timed["window_kernels"], timed["window_kernel_time_us"]
    dt = (t / prof["kernel_time_us"] - 1) * 100
    check(
        "count",
        n == prof["kernels"] and abs(dt) <= 1.0,
        f"timed range {n:.0f} kernels, {t:.1f} us by window ({timed['kernels']:.0f} by the "
        f"launching thread); torch.profiler {prof['kernels']} kernels, "
        f"{prof['kernel_time_us']:.1f} us; time {dt:+.2f}%",
    )

    db = sqlite3.connect(trace_dir / "trace.sqlite")
    text = "COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId))"
    main_tid = db.execute(
        f"SELECT n.globalTid FROM NVTX_EVENTS n WHERE {text} = 'timed' LIMIT 1"
    ).fetchone()[0]
    bwd = db.execute(f"SELECT n.start, n.end FROM NVTX_EVENTS n WHERE {text} = 'backward'").fetchall()
    launches = db.execute(
        "SELECT r.start, r.globalTid FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId"
    ).fetchall()
    other = [s for s, tid in launches if tid != main_tid]
    inside = sum(any(a <= s < b for a, b in bwd) for s in other)
    b = ranges.get("backward", {})
    check(
        "backward",
        bool(other) and inside == len(other),
        f"{len(other)} kernels launched from other threads than the main one, {inside} of them "
        f"inside a `backward` range; the backward range holds {b.get('window_kernels', 0):.0f} "
        f"kernels by window, {b.get('kernels', 0):.0f} by the launching thread "
        f"({len(bwd)} instances)",
    )

    on_modules = sum(m["self_kernel_time_us"] for r, m in ranges.items() if r.startswith("model"))
    backward_modules = sum(
        m["self_kernel_time_us"]
        for r, m in ranges.items()
        if r.startswith("model") and r.endswith("[backward]")
    )
    fb = sum(ranges.get(r, {}).get("window_kernel_time_us", 0.0) for r in ("forward", "backward"))
    opt = ranges.get("optimizer", {}).get("window_kernel_time_us", 0.0)
    share = 100 * on_modules / fb if fb else 0.0
    check(
        "modules",
        share >= 95.0,
        f"{share:.2f}% of the forward and backward kernel time on a module range "
        f"({on_modules:.1f} of {fb:.1f} us; {backward_modules:.1f} us in backward module "
        f"ranges); the optimizer's {opt:.1f} us ({100 * opt / t if t else 0:.1f}% of the timed "
        f"kernel time) belong to no module",
    )

    over = rows(art, "trace_overhead")
    steps = [json.loads(line)["step_ms"] for line in log_path.read_text().splitlines()
             if line.startswith('{"step_ms"')]
    # The runs alternate untraced, traced, ...: the last (traced) one is the kept trace.
    untraced = [x for i, s in enumerate(steps) if i % 2 == 0 for x in s]
    traced = [x for i, s in enumerate(steps) if i % 2 == 1 for x in s]
    step_text = "no step_ms lines"
    if untraced and traced:
        u, tr = statistics.median(untraced), statistics.median(traced)
        step_text = (f"steps: median {u:.2f} ms untraced, {tr:.2f} ms traced "
                     f"({(tr / u - 1) * 100:+.1f}%, {len(untraced)} and {len(traced)} steps)")
        summary["step_ms_untraced_median"] = u
        summary["step_ms_traced_median"] = tr
    if over:
        m = over[0]["metrics"]
        check("overhead", True,
              f"processes: median {m['untraced_median_s']:.3f} s untraced, "
              f"{m['traced_median_s']:.3f} s traced ({m['slowdown_pct']:+.1f}%, "
              f"{m['pairs']:.0f} pairs); {step_text}")
    else:
        check("overhead", False, f"no trace_overhead row in trace.json; {step_text}")
    (trace_dir / "checks.json").write_text(json.dumps(summary, indent=1))
    return fails


if __name__ == "__main__":
    sys.exit(main())
