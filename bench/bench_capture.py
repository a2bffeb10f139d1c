#!/usr/bin/python3
"""bench/bench_capture.py - what a deep capture costs the job.

An unmodified CPU model (tests/torch/cnn_loader.py, no reader delay) runs
under `proftop record`; past its warm-up steps, `proftop capture -p PID
--steps N` is run ROUNDS times, GAP seconds apart. Each capture prints the job's step
time (medians of the session's own steps): the 5 steps before it (the
reference, measured in the same run), the N steps during it, the 5 steps
after it (once the job has written the trace), and how long starting and
stopping torch's profiler blocked the step that did it. The figures are the
medians over the rounds, and the ratios during/before and after/before.
The recording then gives paired figures away from the capture command's
own start and the helper's writing: the 20 steps well before each capture
against the captured ones and the 20 steps well after it.

    /usr/bin/python3 bench/bench_capture.py [--build build] [--rounds 15] [--steps 5] [--gap 1]
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
LINE = re.compile(r"step ([0-9.]+) ms during vs ([0-9.]+) ms before \(x[0-9.]+\), ([0-9.]+) ms "
                  r"after; start blocked ([0-9.]+) ms, stop ([0-9.]+) ms; written in ([0-9.]+) ms")


def recorded_steps(path):
    """The job's step durations (ms) in the recording, in order: index i is
    step i, the numbering the capture line uses."""
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return []
    ev = d["traceEvents"] if isinstance(d, dict) else d
    st = sorted((e for e in ev if e.get("ph") == "X" and e.get("name") == "ProfileStep"),
                key=lambda e: e["ts"])
    return [e["dur"] / 1000.0 for e in st]


def paired(steps, windows):
    """Pooled step times of the recording: 20 steps well before each capture
    (A-30..A-11: before the capture command started), the captured ones,
    and 20 steps well after it (B+31..B+50: the trace written)."""
    before, during, after = [], [], []
    for w in windows:
        if w is None or w[0] < 30 or w[1] + 51 > len(steps):
            continue
        a, b = w
        before += steps[a - 30:a - 10]
        during += steps[a:b + 1]
        after += steps[b + 31:b + 51]
    return before, during, after


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--gap", type=float, default=1.0)
    a = ap.parse_args()
    proftop = os.path.join(os.path.abspath(a.build), "proftop")
    with tempfile.TemporaryDirectory(prefix="proftop-bench-cap.") as tmp:
        env = dict(os.environ)
        env["PROFTOP_SESSION_DIR"] = os.path.join(tmp, "s")
        os.mkdir(env["PROFTOP_SESSION_DIR"], 0o700)
        warm = os.path.join(tmp, "warm")
        rec = subprocess.Popen([proftop, "record", "-o", os.path.join(tmp, "rec.json"), "--log",
                                os.path.join(tmp, "rec.log"), "--", "/usr/bin/python3",
                                os.path.join(ROOT, "tests/torch/cnn_loader.py"), "--steps",
                                "1000000", "--read-ms", "0", "--mark-after", "50",
                                "--mark-file", warm], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        rows, windows = [], []
        try:
            for _ in range(1200):
                if os.path.exists(warm):
                    break
                time.sleep(0.1)
            else:
                sys.exit("bench_capture: the job did not start")
            pid = [f[:-8] for f in os.listdir(env["PROFTOP_SESSION_DIR"])
                   if f.endswith(".session")][0]
            for i in range(a.rounds):
                r = subprocess.run([proftop, "capture", "-p", pid, "--steps", str(a.steps), "-o",
                                    os.path.join(tmp, "cap%d.json" % i)], env=env,
                                   capture_output=True, text=True, timeout=300)
                m = LINE.search(r.stderr)
                if r.returncode != 0 or not m:
                    sys.exit("bench_capture: capture failed:\n" + r.stderr[-2000:])
                rows.append([float(v) for v in m.groups()])
                st = re.search(r": steps ([0-9]+)-([0-9]+),", r.stderr)
                windows.append((int(st.group(1)), int(st.group(2))) if st else None)
                time.sleep(a.gap)  # steps of the job alone between two captures
        finally:
            rec.send_signal(signal.SIGINT)
            rec.wait(timeout=120)
        steps = recorded_steps(os.path.join(tmp, "rec.json"))
    med = [statistics.median(r[k] for r in rows) for k in range(6)]
    during, before, after, start, stop, write = med
    print("capture of %d steps, %d rounds (medians; each round's figures are medians of the "
          "job's own steps)" % (a.steps, a.rounds))
    print("  step before    %8.2f ms   (reference: the 5 steps before each capture)" % before)
    print("  step during    %8.2f ms   ratio %.2f (the stop is counted in the last step)"
          % (during, during / before))
    print("  step after     %8.2f ms   ratio %.2f (the 5 steps once the trace is written)"
          % (after, after / before))
    print("  start blocked  %8.2f ms   (torch.profiler's start and the clock marker)" % start)
    print("  stop blocked   %8.2f ms   (torch.profiler's stop, on the step's thread)" % stop)
    print("  written in     %8.2f ms   (in a thread of its own; the steps go on)" % write)
    before, during, after = paired(steps, windows)
    if before and after:
        mb, md, ma = (statistics.median(v) for v in (before, during, after))
        print("the recording's steps, pooled over the rounds (paired: the same job, around "
              "each capture)")
        print("  20 steps well before each  %8.2f ms   (reference)" % mb)
        print("  the captured steps         %8.2f ms   ratio %.2f" % (md, md / mb))
        print("  20 steps well after each   %8.2f ms   ratio %.2f" % (ma, ma / mb))
    else:
        print("the recording's steps: not enough around the captures (rounds too close?)")


if __name__ == "__main__":
    main()
