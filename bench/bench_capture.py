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

    /usr/bin/python3 bench/bench_capture.py [--build build] [--rounds 15] [--steps 5] [--gap 1]
"""
import argparse
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
        rows = []
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
                time.sleep(a.gap)  # steps of the job alone between two captures
        finally:
            rec.send_signal(signal.SIGINT)
            rec.wait(timeout=120)
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


if __name__ == "__main__":
    main()
