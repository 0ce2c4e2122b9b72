"""Copies an artifacts folder and adds traced workloads until it holds N (default 50): each new
one is the smallest trace artifact found there under a new workload name and run id, so the dashboard's
frame can be checked at a scale the committed artifacts do not reach. Only the artifact is copied
(the pages need nothing else); the copies are marked synthetic in their run block.

usage: python3 tests/browser/many_traces.py ARTIFACTS OUT [N]
"""
import json
import shutil
import sys
from pathlib import Path


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    want = int(sys.argv[3]) if len(sys.argv) == 4 else 50
    if out.exists():
        print(f"many_traces.py: {out} exists; give a new folder", file=sys.stderr)
        return 2
    shutil.copytree(src, out, symlinks=True)
    traces = []
    for p in sorted(out.rglob("*.json"), key=lambda p: p.stat().st_size):
        if "history" in p.relative_to(out).parts:
            continue
        try:
            doc = json.loads(p.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(doc, dict) and doc.get("kind") == "trace":
            traces.append(doc)
    workloads = {r["implementation"] for t in traces for r in t["results"]}
    if not traces:
        print(f"many_traces.py: no trace artifact (kind \"trace\") under {src}", file=sys.stderr)
        return 2
    seed = traces[0]
    for i in range(want - len(workloads)):
        name = f"scale-{i:03d}"
        doc = json.loads(json.dumps(seed))
        doc["run"]["id"] = f"{seed['run']['id']}-{name}"
        doc["run"]["synthetic"] = True
        for r in doc["results"]:
            r["implementation"] = name
        d = out / "scale-traces" / name
        d.mkdir(parents=True)
        (d / "trace.json").write_text(json.dumps(doc))
    print(f"{want} traced workloads in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
