"""check_trace.py - the checks tests/gpu/run.sh makes on a trace proftop wrote
(Chrome JSON, `proftop record -o`) and on its report (`proftop report --json`).
Prints "ok ..." or "FAIL ..." per check; exits 1 when one failed.

    check_trace.py TRACE.json REPORT.json [--kernels N] [--max-orphan-share F]
        [--ops A,B] [--every-step-from K] [--name S] [--no-mangled]

Kernels and copies carry the correlation id of the call that launched them;
that call (a CudaRuntime event: runtime or driver API) is on the launching
thread. A kernel whose call is not in the trace is an orphan: it gets no op
and no phase. Clock sanity: no kernel starts before its call (2 us of
conversion slack) or more than 10 s after it.
"""
import argparse
import bisect
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("trace")
ap.add_argument("report")
ap.add_argument("--kernels", type=int)
ap.add_argument("--max-orphan-share", type=float)
ap.add_argument("--ops", default="")
ap.add_argument("--every-step-from", type=int)
ap.add_argument("--name", default="")
ap.add_argument("--no-mangled", action="store_true")
a = ap.parse_args()

ev = json.load(open(a.trace))["traceEvents"]
rep = json.load(open(a.report))
fails = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)


kern = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("Kernel", "Communication")]
calls = {}
for e in ev:
    if e.get("ph") == "X" and e.get("cat") == "CudaRuntime":
        c = e.get("args", {}).get("correlation")
        if c is not None:
            calls[c] = e
check(len(kern) > 0, "kernels recorded: %d" % len(kern))
if a.kernels is not None:
    check(len(kern) == a.kernels, "kernels recorded = kernels launched (%d, %d)" % (len(kern), a.kernels))
orphans = [k for k in kern if k.get("args", {}).get("correlation") not in calls]
total = sum(k.get("dur", 0) for k in kern) or 1
share = sum(k.get("dur", 0) for k in orphans) / total
if a.max_orphan_share is not None:
    check(share <= a.max_orphan_share,
          "orphan share %.1f%% of kernel time (%d kernels with no launch call; at most %.0f%%)"
          % (share * 100, len(orphans), a.max_orphan_share * 100))
early = late = 0
worst = 0.0
for k in kern:
    c = calls.get(k.get("args", {}).get("correlation"))
    if not c:
        continue
    d = k["ts"] - c["ts"]  # microseconds
    if d < -2.0:
        early += 1
        worst = min(worst, d)
    if d > 10e6:
        late += 1
check(early == 0, "clock: no kernel starts before its launch call (%d do, worst %.1f us)" % (early, worst))
check(late == 0, "clock: no kernel starts more than 10 s after its launch call (%d do)" % late)
names = {k["name"] for k in kern}
if a.name:
    check(any(a.name in n for n in names), "a kernel named like %s" % a.name)
if a.no_mangled:
    check(not any(n.startswith("_Z") for n in names), "kernel names demangled")
ops = {o.get("name"): o for o in rep.get("operators", [])}
for op in filter(None, a.ops.split(",")):
    check(ops.get(op, {}).get("gpu_total_ms", 0) > 0, "op %s has GPU time" % op)
if a.every_step_from is not None:
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev
                   if e.get("ph") == "X" and e.get("cat") == "ProfileStep")
    launch_ts = sorted(calls[k["args"]["correlation"]]["ts"] for k in kern
                       if k.get("args", {}).get("correlation") in calls)
    empty = []
    for i, (s, e) in enumerate(steps):
        if i < a.every_step_from:
            continue
        lo = bisect.bisect_left(launch_ts, s)
        hi = bisect.bisect_right(launch_ts, e)
        if hi <= lo:
            empty.append(i)
    check(len(steps) > a.every_step_from and not empty,
          "kernels launched in every step from %d of %d (empty: %s)" % (a.every_step_from, len(steps), empty[:10]))
sys.exit(1 if fails else 0)
