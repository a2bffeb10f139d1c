"""bench/bench_collectives.py - what the helper adds to one torch.distributed call.

Runs itself under `proftop record` (the helper wraps torch.distributed's
collectives) as a one-rank gloo group, and in that one process times
all_reduce and broadcast of a 4-byte tensor through the helper's wrapper
and through the function it wraps (`__wrapped__`), alternating blocks of
CALLS calls, RUNS times; prints the medians and the ns the wrapper adds
per call beside the bare call (the reference of the same run). The last
row wraps a function that does nothing: the helper's own cost, without
gloo's threads (back-to-back gloo calls keep its worker thread hot; a few
microseconds between them let it sleep, which the real-call rows include).

    .venv/bin/python bench/bench_collectives.py [--build build] [--runs 7]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CALLS = 2000


def alternate(w, b, runs):
    """Medians of ns per call of w and of b, in alternating blocks of CALLS."""
    for _ in range(200):
        w()
        b()
    tw, tb = [], []
    for _ in range(runs):
        for f, acc in ((w, tw), (b, tb)):
            s = time.perf_counter_ns()
            for _ in range(CALLS):
                f()
            acc.append((time.perf_counter_ns() - s) / CALLS)
    return statistics.median(tw), statistics.median(tb)


def child(runs):
    import torch
    import torch.distributed as dist
    d = tempfile.mkdtemp()
    dist.init_process_group("gloo", init_method="file://" + os.path.join(d, "store"),
                            rank=0, world_size=1)
    t = torch.ones(1)
    out = {}
    for name in ("all_reduce", "broadcast"):
        wrapped = getattr(dist, name)
        bare = getattr(wrapped, "__wrapped__", None)
        if bare is None:
            print("RESULT %s=unwrapped" % name)
            continue
        call = (lambda f: (lambda: f(t))) if name == "all_reduce" else (lambda f: (lambda: f(t, 0)))
        out[name] = alternate(call(wrapped), call(bare), runs)
    # the wrapper alone: around a function that does nothing (same signature),
    # the helper's own cost with no gloo thread beside it
    pd = sys.modules.get("proftop_dist")
    if pd is not None:
        def noop(tensor, op=None, group=None, async_op=False):
            return None
        wn = pd._wrap("all_reduce", noop, "tensor", 0)
        out["no-op"] = alternate(lambda: wn(t), lambda: noop(t), runs)
    dist.destroy_process_group()
    for name, (mw, mb) in out.items():
        print("RESULT %s wrapped=%.0f bare=%.0f added=%.0f ratio=%.3f" % (name, mw, mb, mw - mb, mw / mb))
    sys.stdout.flush()
    os._exit(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    if a.child:
        child(a.runs)
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "job.log")
        cmd = [os.path.join(ROOT, a.build, "proftop"), "record", "-o", os.path.join(tmp, "o.json"),
               "--log", log, "--", sys.executable, os.path.abspath(__file__), "--child",
               "--runs", str(a.runs)]
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        lines = [l for l in open(log) if l.startswith("RESULT")]
    if not lines:
        print("no result (torch.distributed with gloo unavailable?)")
        return
    for l in lines:
        f = l.split()
        kv = dict(x.split("=") for x in f[2:])
        print("%-11s helper %6s ns/call, bare call %6s ns: +%s ns (%sx), medians of %d x %d calls"
              % (f[1], kv["wrapped"], kv["bare"], kv["added"], kv["ratio"], a.runs, CALLS))


if __name__ == "__main__":
    main()
