#!/usr/bin/env python3
"""bench/bench_merge.py - `proftop merge` of N per-rank traces.

Writes N synthetic PyTorch-style rank traces of about --events events each
(steps, dataloader, nested operators, runtime launches and kernels with
correlation ids; every rank but the first on a clock hours away, so the
merge shifts them), then times `proftop merge` (read every input, re-key,
align, export the merged trace: temporary file, fsync, rename) in input
events per second, beside two references over the same bytes: `cat` of the
inputs into one file (the floor for moving the bytes) and python's
json.load of each input (parsing alone, no output). Median of --runs runs.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def synth(path, n_events, rank, base_us):
    with open(path, "w") as f:
        f.write('{"distributedInfo":{"rank":%d,"world_size":8},"traceEvents":[\n' % rank)
        ts, corr, n, step, first = base_us, 1, 0, 0, True
        pid = 1000 + rank
        while n < n_events:
            f.write('%s{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":%d,"tid":%d,"ts":%.3f,"dur":2000.0}'
                    % ("" if first else ",", step, pid, pid, ts))
            first = False
            f.write(',{"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_Iter.__next__","pid":%d,"tid":%d,"ts":%.3f,"dur":100.0}\n'
                    % (pid, pid, ts + 1))
            t = ts + 110
            n += 2
            for i in range(150):
                f.write(',{"ph":"X","cat":"cpu_op","name":"aten::op%d","pid":%d,"tid":%d,"ts":%.3f,"dur":10.5}'
                        ',{"ph":"X","cat":"cpu_op","name":"aten::inner%d","pid":%d,"tid":%d,"ts":%.3f,"dur":5.25}'
                        ',{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":%d,"tid":%d,"ts":%.3f,"dur":2.0,"args":{"correlation":%d}}'
                        ',{"ph":"X","cat":"kernel","name":"kernel_%d","pid":0,"tid":7,"ts":%.3f,"dur":8.0,"args":{"device":0,"stream":7,"correlation":%d}}\n'
                        % (i % 40, pid, pid, t, i % 40, pid, pid, t + 1, pid, pid, t + 2, corr,
                           i % 60, t + 5, corr))
                t += 12
                corr += 1
                n += 4
            ts += 2000.0
            step += 1
        f.write("]}\n")
    return n


def timed(cmd, runs, **kw):
    """Median wall time of runs runs."""
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
        ts.append(time.perf_counter() - t0)
    ts.sort()
    n = len(ts)
    return ts[n // 2] if n % 2 else (ts[n // 2 - 1] + ts[n // 2]) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    proftop = os.path.join(args.build, "proftop")
    tmp = tempfile.mkdtemp(prefix="proftop-bench-merge.")
    try:
        ins, total = [], 0
        for r in range(args.ranks):
            p = os.path.join(tmp, "rank%d.json" % r)
            total += synth(p, args.events, r, 1_000_000.0 + r * 3.6e9 + r * 137)
            ins.append(p)
        mb = sum(os.path.getsize(p) for p in ins) / 1e6
        out = os.path.join(tmp, "merged.json")
        tm = timed([proftop, "merge", *ins, "-o", out, "--force"], args.runs)
        merged = json.load(open(out))
        od = merged["otherData"]
        assert len(od["clock_offsets_ns"]) == args.ranks, od["clock_offsets_ns"]
        omb = os.path.getsize(out) / 1e6
        tc = timed(["sh", "-c", 'cat "$@" > "$0"', out + ".cat", *ins], args.runs)
        code = "import json,sys\nfor p in sys.argv[1:]: json.load(open(p))"
        tj = timed([sys.executable, "-c", code, *ins], 1)
        print("%d ranks x %d events = %d events, %.0f MB of JSON in, %.0f MB out"
              % (args.ranks, args.events, total, mb, omb))
        print("proftop merge   %7.3fs  %5.2f M events/s  %6.0f MB/s in"
              % (tm, total / tm / 1e6, mb / tm))
        print("cat of inputs   %7.3fs  (floor for moving the bytes; merge/cat = %.1fx)" % (tc, tm / tc))
        print("python json.load %6.3fs  (parsing only; %.1fx slower than proftop merge)" % (tj, tj / tm))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
