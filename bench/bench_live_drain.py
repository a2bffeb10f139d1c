#!/usr/bin/env python3
"""bench_live_drain.py - what the live drain keeps while the machine is busy.

`proftop run -- flood` with the screen on (a 200x50 pseudo-terminal this
script reads, as a terminal would) and with --no-screen, each beside BUSY
busy loops (default 5 per core: a load average of about 10 on 2 cores).
Per run: the events kept of those the job produced (kept + counted lost)
and proftop's own CPU (user + system, its children's rusage) over its wall
time. The same loops run beside every run; screen and no-screen runs
alternate; medians of --runs.

  python3 bench/bench_live_drain.py [--build build] [--runs 3] [--seconds 5]
      [--rate 1000000] [--busy N] [--screen both|on|off]
"""
import argparse
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time


def own_cpu_s(pid):
    """The process's own user + system CPU (not its children's), None once gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            w = f.read().rsplit(")", 1)[1].split()
        return (int(w[11]) + int(w[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def one_run(proftop, flood, rate, seconds, screen, busy, env):
    """(kept, produced, proftop's CPU share of one core)"""
    args = [proftop, "run"]
    if not screen:
        args.append("--no-screen")
    args += ["--exit-on-end", "--full", "--", flood, "--rate", str(rate), "--seconds", str(seconds),
             "--step-every", "1000"]
    out = b""
    # proftop runs on a terminal of its own (a session of its own); the busy
    # loops start in that session first, so that where the kernel groups a
    # session's tasks (autogroup) they share proftop's group, as the jobs
    # beside it do in a CI run, rather than each weighing as a whole group
    pid, fd = pty.fork()
    if pid == 0:
        for _ in range(busy):
            subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        os.execve(proftop, args, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    while True:  # from the exec on: the loops' start is not proftop's
        try:
            with open("/proc/%d/comm" % pid) as f:
                if f.read().strip() == "proftop":
                    break
        except OSError:
            break
        time.sleep(0.01)
    t0, c0 = time.monotonic(), own_cpu_s(pid) or 0.0
    t1, c1 = t0, c0
    while True:
        r, _, _ = select.select([fd], [], [], 0.1)
        c = own_cpu_s(pid)
        if c is not None:
            t1, c1 = time.monotonic(), c
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out = (out + chunk)[-200000:]
    os.waitpid(pid, 0)
    try:
        os.killpg(pid, signal.SIGKILL)  # the busy loops
    except ProcessLookupError:
        pass
    os.close(fd)
    text = out.decode("utf-8", "replace")
    # "Events: K kept of S seen, D dropped (X by the source, Y by the memory
    # cap)": what the drain kept is what reached proftop (S) of what the job
    # produced (S + X); the memory cap's drops (--max-mem) are not the drain's
    m = re.findall(r"Events: \d+ kept of (\d+) seen(?: \(\d+ summarized\))?, "
                   r"(?:\d+ dropped \((\d+) by the source|0 dropped)", text)
    if not m:
        sys.exit("proftop run printed no Events line:\n" + text[-2000:])
    kept, dropped = int(m[-1][0]), int(m[-1][1] or 0)
    if os.environ.get("PT_BENCH_SHOW"):
        tail = text[text.rfind("proftop: "):]
        sys.stderr.write(tail[:3000] + "\n")
    return kept, kept + dropped, (c1 - c0) / max(t1 - t0, 1e-9)


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--rate", type=int, default=1_000_000)
    ap.add_argument("--busy", type=int, default=5 * os.cpu_count())
    ap.add_argument("--screen", choices=("both", "on", "off"), default="both")
    a = ap.parse_args()
    proftop = os.path.abspath(os.path.join(a.build, "proftop"))
    flood = os.path.abspath(os.path.join(a.build, "examples", "flood"))
    tmp = tempfile.mkdtemp(prefix="proftop-bench.")
    env = dict(os.environ, TERM="xterm-256color", XDG_RUNTIME_DIR=tmp, XDG_STATE_HOME=tmp,
               PROFTOP_SESSION_DIR=os.path.join(tmp, "s"))
    modes = {"both": (True, False), "on": (True,), "off": (False,)}[a.screen]
    res = {m: [] for m in modes}
    try:
        for _ in range(a.runs):
            for m in modes:
                res[m].append(one_run(proftop, flood, a.rate, a.seconds, m, a.busy, env))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load = os.getloadavg()[0]
    print("flood --rate %d for %gs beside %d busy loops in proftop's session (load average %.1f),"
          " medians of %d" % (a.rate, a.seconds, a.busy, load, a.runs))
    for m in modes:
        kept = [100.0 * k / p for k, p, _ in res[m]]
        cpu = [100.0 * c for _, _, c in res[m]]
        print("  %-10s kept %.3f%% (runs %s); proftop's CPU %.1f%% of a core (runs %s)"
              % ("screen" if m else "no screen", median(kept),
                 ", ".join("%.3f" % k for k in kept), median(cpu),
                 ", ".join("%.1f" % c for c in cpu)))


if __name__ == "__main__":
    main()
