#!/usr/bin/env python3
"""Reference for the import benchmark: a plain Python script that json.loads a
Chrome trace and builds the per-operator table proftop's report builds (calls,
inclusive total, self, max, min per operator name, nesting per thread), so the
two can be timed side by side on the same file. Prints the number of rows.
With --orjson the document is parsed by orjson (PyPI, bench/requirements.txt)
instead of the standard library's json: the same table on the fastest
Python parser."""
import gzip
import json
import sys
from collections import defaultdict


def main(path, use_orjson=False):
    opener = gzip.open if path.endswith(".gz") else open
    if use_orjson:
        import orjson
        with opener(path, "rb") as f:
            doc = orjson.loads(f.read())
    else:
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:
            doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    per_thread = defaultdict(list)
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("cpu_op", "Operator"):
            continue
        ts = float(e["ts"])
        per_thread[(e.get("pid"), e.get("tid"))].append((ts, -float(e.get("dur", 0)), e["name"]))
    rows = {}
    for evs in per_thread.values():
        evs.sort()
        stack = []  # [end, name, dur, children]

        def close(item):
            end, name, dur, child = item
            r = rows.get(name)
            if r is None:
                r = rows[name] = [0, 0.0, 0.0, 0.0, float("inf")]
            r[0] += 1
            r[1] += dur
            r[2] += max(0.0, dur - child)
            r[3] = max(r[3], dur)
            r[4] = min(r[4], dur)

        for ts, negdur, name in evs:
            dur = -negdur
            while stack and stack[-1][0] <= ts:
                close(stack.pop())
            if stack:
                stack[-1][3] += dur
            stack.append([ts + dur, name, dur, 0.0])
        while stack:
            close(stack.pop())
    print(len(rows))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--orjson"]
    main(args[0], "--orjson" in sys.argv[1:])
