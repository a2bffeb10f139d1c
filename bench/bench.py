#!/usr/bin/env python3
"""bench/bench.py - end-to-end benchmarks of the proftop binary.

import:  `proftop report FILE --json` (read + aggregate + print) on PyTorch
         traces, in MB/s of JSON text, beside bench/ref_optable.py (json.load +
         the per-operator table) on the same file: the ratio is the speed-up.
memory:  peak RSS of that run against the budget of 64 bytes per kept event
         plus 32 MiB.
export:  `proftop export` events per second, beside `cat` of the output
         (a floor for writing the same bytes).
Each figure is the best of --runs runs.
"""
import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

BIG = [
    "hta/trace_diff__control__control.json.gz",
    "hta/df_index_resolver__df_index_resolver.json.gz",
    "kineto_tb_plugin/samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
]


def run(cmd, stdout=subprocess.DEVNULL):
    """Runs cmd, returns (wall seconds, peak RSS bytes of the child, stdout)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE if stdout is None else stdout)
    out = p.stdout.read() if stdout is None else b""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("benchmark command failed: %s" % " ".join(cmd))
    return wall, ru.ru_maxrss * 1024, out


def best(cmd, runs, stdout=subprocess.DEVNULL):
    res = [run(cmd, stdout) for _ in range(runs)]
    return min(res, key=lambda r: r[0])


def synth(path, n_events):
    """A PyTorch-style trace of about n_events events: steps with dataloader,
    nested operators with runtime launches, and kernels on one stream."""
    with open(path, "w") as f:
        f.write('{"traceEvents":[\n')
        ts, corr, n, first = 1_000_000.0, 1, 0, True
        step = 0
        while n < n_events:
            f.write('%s{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%.3f,"dur":%.3f}'
                    % ("" if first else ",", step, ts, 2000.0))
            first = False
            f.write(',{"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_Iter.__next__","pid":1,"tid":1,"ts":%.3f,"dur":100.0}\n' % (ts + 1))
            t = ts + 110
            n += 2
            for i in range(150):
                f.write(',{"ph":"X","cat":"cpu_op","name":"aten::op%d","pid":1,"tid":1,"ts":%.3f,"dur":10.5,"args":{"External id":%d}}'
                        ',{"ph":"X","cat":"cpu_op","name":"aten::inner%d","pid":1,"tid":1,"ts":%.3f,"dur":5.25}'
                        ',{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%.3f,"dur":2.0,"args":{"correlation":%d}}'
                        ',{"ph":"X","cat":"kernel","name":"kernel_%d","pid":0,"tid":7,"ts":%.3f,"dur":8.0,"args":{"device":0,"stream":7,"correlation":%d}}\n'
                        % (i % 40, t, corr, i % 40, t + 1, t + 2, corr, i % 60, t + 5, corr))
                t += 12
                corr += 1
                n += 4
            ts += 2000.0
            step += 1
        f.write("]}\n")


def step_ms(out):
    for line in out.decode().splitlines():
        if "done steps=" in line:
            return float(line.split("step_ms=")[1].split()[0])
    sys.exit("minitrain printed no final line")


def minitrain_overhead(args, tmp):
    """minitrain's mean step time alone and under `proftop record` (probe
    loaded, reader attached and draining), alternating runs; medians."""
    mt = os.path.join(args.build, "examples", "minitrain")
    proftop = os.path.join(args.build, "proftop")
    if not os.path.exists(mt):
        return
    print()
    print("== minitrain step time with proftop attached vs without (median of 7 alternating runs)")
    env = dict(os.environ, PROFTOP_SESSION_DIR=os.path.join(tmp, "sessions"))
    os.makedirs(env["PROFTOP_SESSION_DIR"], mode=0o700, exist_ok=True)
    cmd = [mt, "--steps", "300", "--log-every", "0"]
    alone, attached = [], []
    for i in range(7):
        p = subprocess.run(cmd, capture_output=True, env=env)
        alone.append(step_ms(p.stdout + p.stderr))
        out = os.path.join(tmp, "mt.json")
        p = subprocess.run([proftop, "record", "-o", out, "--log", os.path.join(tmp, "mt.log"), "--"] + cmd,
                           capture_output=True, env=env)
        with open(os.path.join(tmp, "mt.log"), "rb") as f:
            attached.append(step_ms(f.read()))
    alone.sort()
    attached.sort()
    a, b = alone[3], attached[3]
    print("minitrain --steps 300: %.3f ms/step alone, %.3f ms/step under proftop record: %+.2f%%"
          % (a, b, (b - a) / a * 100))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    proftop = os.path.join(args.build, "proftop")
    traces = os.environ.get("PT_TRACES", "../shared/traces")
    tmp = tempfile.mkdtemp(prefix="proftop-bench.")
    try:
        print("== import + aggregate (proftop report --json) vs python json.load + operator table")
        print("%-44s %9s %10s %10s %10s %7s" % ("file (uncompressed)", "MB", "proftop", "MB/s", "python", "ratio"))
        for rel in BIG:
            src = os.path.join(traces, rel)
            if not os.path.exists(src):
                print("%-44s skipped (not found)" % rel)
                continue
            plain = os.path.join(tmp, os.path.basename(rel)[:-3])
            with gzip.open(src, "rb") as fi, open(plain, "wb") as fo:
                shutil.copyfileobj(fi, fo)
            mb = os.path.getsize(plain) / 1e6
            tp, rss, out = best([proftop, "report", plain, "--json"], args.runs, stdout=None)
            rep = json.loads(out)
            tr, _, _ = best([sys.executable, "bench/ref_optable.py", plain], args.runs)
            kept = rep.get("events", 0)
            print("%-44s %9.1f %9.3fs %10.0f %9.3fs %6.1fx" % (os.path.basename(plain)[:44], mb, tp, mb / tp, tr, tr / tp))
            budget = kept * 64 + 32 * 2**20
            print("%-44s %9s peak RSS %.1f MiB for %d events = %.0f B/event; budget %.1f MiB (%.2f of it)"
                  % ("", "", rss / 2**20, kept, rss / max(kept, 1), budget / 2**20, rss / budget))
        print()
        print("== memory per kept event (synthetic trace, 2 M events)")
        big = os.path.join(tmp, "synth.json")
        synth(big, 2_000_000)
        mb = os.path.getsize(big) / 1e6
        tp, rss, out = best([proftop, "report", big, "--json", "--top", "5"], 1, stdout=None)
        kept = json.loads(out).get("events", 0)
        budget = kept * 64 + 32 * 2**20
        print("%.0f MB of JSON, %d events kept: %.2fs (%.0f MB/s), peak RSS %.1f MiB = %.1f B/event; "
              "budget 64 B/event + 32 MiB = %.1f MiB (%.2f of it)"
              % (mb, kept, tp, mb / tp, rss / 2**20, rss / max(kept, 1), budget / 2**20, rss / budget))
        os.unlink(big)
        minitrain_overhead(args, tmp)
        src = os.path.join(traces, BIG[0])
        if os.path.exists(src):
            print()
            print("== export (proftop export) vs cat of the same output")
            out = os.path.join(tmp, "out.json")
            t, _, _ = best([proftop, "export", src, "-o", out, "--force"], args.runs)
            rep = json.loads(run([proftop, "report", src, "--json"], stdout=None)[2])
            n = rep.get("events", 0)
            tc, _, _ = best(["sh", "-c", "cat %s > %s.copy" % (out, out)], args.runs)
            print("events %d, export %.3fs (read + write) = %.2f M events/s; cat of the %.1f MB output %.3fs"
                  % (n, t, n / t / 1e6, os.path.getsize(out) / 1e6, tc))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
