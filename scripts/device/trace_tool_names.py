"""Kernels per name in the NVTX range "steps" of a `trace` SQLite file against torch.profiler's
count per name over the same steps (scripts/device/trace_tool_torch.py --mode profile, run in
another process): prints every name whose count differs, so a count mismatch in
scripts/device/trace_tool.sh says which kernels make it. A kernel is in the range when the API
call that launched it (runtime or driver, by correlation id) started inside a "steps" range on
the same thread, as `trace`'s trace_range rows count it.

  python3 scripts/device/trace_tool_names.py OUT/torch_graphs/trace.sqlite \
      OUT/torch_graphs.profiler.json"""

import json
import sqlite3
import sys

SQL = """
WITH steps AS (
  SELECT start, end, globalTid FROM NVTX_EVENTS WHERE text = 'steps'),
calls AS (
  SELECT correlationId, start, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME
  UNION ALL
  SELECT correlationId, start, globalTid FROM CUPTI_ACTIVITY_KIND_DRIVER),
inside AS (
  SELECT DISTINCT c.correlationId FROM calls c JOIN steps s
    ON c.globalTid = s.globalTid AND c.start >= s.start AND c.start < s.end)
SELECT n.value, count(*), sum(k.graphId != 0)
FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.demangledName
WHERE k.correlationId IN (SELECT correlationId FROM inside)
GROUP BY n.value
"""


def main():
    db, prof = sys.argv[1], sys.argv[2]
    ours = {name: (n, g) for name, n, g in sqlite3.connect(db).execute(SQL)}
    theirs = json.load(open(prof)).get("by_name", {})
    total = sum(n for n, _ in ours.values())
    graph = sum(g for _, g in ours.values())
    print(f"names: trace {total} kernels in 'steps' ({graph} graph nodes), "
          f"profiler {sum(theirs.values())}")
    for name in sorted(set(ours) | set(theirs)):
        n, g = ours.get(name, (0, 0))
        if n != theirs.get(name, 0):
            print(f"  trace {n:6} ({g} in graphs)  profiler {theirs.get(name, 0):6}  {name[:110]}")


if __name__ == "__main__":
    main()
