#!/usr/bin/env python3
"""bench/bench.py - end-to-end benchmarks of the proftop binary.

import:  `proftop report FILE --json` (read + aggregate + print) on PyTorch
         traces, in MB/s of JSON text, beside bench/ref_optable.py (json.load +
         the per-operator table) on the same file: the ratio is the speed-up.
         The two run alternately (proftop, python, proftop, ...) and each
         figure is the median of --runs runs, so a load that comes and goes
         on a shared machine hits both alike. Cores used = proftop's CPU time
         (user + system) over its wall time, median.
         The largest input is a synthetic PyTorch-style trace of 2 M events
         (242 MB): steps, dataloader, nested operators, runtime launches and
         kernels. Last, four such ranks merged into one file (1 M events):
         its report adds the Rank Summary.
         Beside them, where it was built (make bench builds it from Debian's
         libsimdjson-dev), bench/ref_simdjson.cpp: simdjson's On-Demand
         parser building the same table on one thread, the native
         reference: proftop's CPU time and wall time over its own; and the
         same table on orjson (PyPI; make bench installs it in .venv), the
         fastest Python parser.
memory:  peak RSS of that run against the budget of 64 bytes per kept event
         plus 32 MiB.
export:  `proftop export` events per second, beside `cat` of the output
         (a floor for writing the same bytes); medians.
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
    """Runs cmd, returns (wall s, peak RSS bytes, stdout, CPU s of the child)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE if stdout is None else stdout)
    out = p.stdout.read() if stdout is None else b""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("benchmark command failed: %s" % " ".join(cmd))
    return wall, ru.ru_maxrss * 1024, out, ru.ru_utime + ru.ru_stime


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def paired(cmd_a, cmd_b, runs, stdout_a=None):
    """Runs a and b alternately, runs times each; returns their run() lists."""
    ra, rb = [], []
    for _ in range(runs):
        ra.append(run(cmd_a, stdout_a))
        rb.append(run(cmd_b))
    return ra, rb


def simd_row(proftop, path, runs, simd):
    """proftop report --json against simdjson's table, alternating: the CPU
    and wall time ratios (the import targets: CPU <= 1.5x, wall <= 1.0x)."""
    rp, rs = [], []
    for _ in range(runs):
        rp.append(run([proftop, "report", path, "--json"]))
        rs.append(run([simd, path], stdout=None))
    pc, pw = median([r[3] for r in rp]), median([r[0] for r in rp])
    sc, sw = median([r[3] for r in rs]), median([r[0] for r in rs])
    # its own reading of the file into simdjson's buffer (part of its time)
    load = median([float(r[2].split()[r[2].split().index(b"load_s") + 1]) for r in rs])
    print("%-44s %7s simdjson table %.3fs CPU, %.3fs wall (%.3fs of it loading the file); "
          "proftop %.3fs CPU (%.2fx; %.2fx of simdjson's CPU less the load), %.3fs wall (%.2fx)"
          % ("", "", sc, sw, load, pc, pc / sc, pc / max(sc - load, 1e-9), pw, pw / sw))


def orjson_row(proftop, path, runs, py):
    """proftop report --json against the same table on orjson (py: a Python
    that has it), alternating: wall time and CPU."""
    rp, ro = paired([proftop, "report", path, "--json"], [py, "bench/ref_optable.py", "--orjson", path],
                    runs)
    pw, ow = median([r[0] for r in rp]), median([r[0] for r in ro])
    pc, oc = median([r[3] for r in rp]), median([r[3] for r in ro])
    print("%-44s %7s orjson table %.3fs wall, %.3fs CPU; proftop %.3fs wall (%.1fx faster), %.3fs CPU"
          % ("", "", ow, oc, pw, ow / pw, pc))


def import_row(proftop, path, runs, label, simd=None, orjson_py=None):
    mb = os.path.getsize(path) / 1e6
    rp, rr = paired([proftop, "report", path, "--json"],
                    [sys.executable, "bench/ref_optable.py", path], runs)
    tp = median([r[0] for r in rp])
    tr = median([r[0] for r in rr])
    cores = median([r[3] / r[0] for r in rp])
    rss = max(r[1] for r in rp)
    kept = json.loads(rp[0][2]).get("events", 0)
    print("%-44s %7.1f %8.3fs %7.0f %4.2f %8.3fs %6.1fx  (proftop %s; python %s)"
          % (label[:44], mb, tp, mb / tp, cores, tr, tr / tp,
             " ".join("%.2f" % r[0] for r in rp), " ".join("%.1f" % r[0] for r in rr)))
    budget = kept * 64 + 32 * 2**20
    print("%-44s %7s peak RSS %.1f MiB for %d events = %.1f B/event; budget %.1f MiB (%.2f of it)"
          % ("", "", rss / 2**20, kept, rss / max(kept, 1), budget / 2**20, rss / budget))
    if simd:
        simd_row(proftop, path, runs, simd)
    if orjson_py:
        orjson_row(proftop, path, runs, orjson_py)


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


def merged_ranks(proftop, tmp, nranks, n_events):
    """A multi-rank trace: bench_merge.py's rank traces (n_events each, on
    clocks apart), merged by `proftop merge` into one file; its report adds
    the Rank Summary (one aggregator per rank) to the whole-trace summary."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_merge
    ins = []
    for r in range(nranks):
        p = os.path.join(tmp, "rank%d.json" % r)
        bench_merge.synth(p, n_events, r, 1_000_000.0 + r * 3.6e9 + r * 137)
        ins.append(p)
    out = os.path.join(tmp, "ranks.json")
    subprocess.run([proftop, "merge", *ins, "-o", out, "--force"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for p in ins:
        os.unlink(p)
    return out


def step_ms(out):
    for line in out.decode().splitlines():
        if "done steps=" in line:
            return float(line.split("step_ms=")[1].split()[0])
    sys.exit("minitrain printed no final line")


def session_env(tmp):
    """The environment with a private session directory under tmp."""
    env = dict(os.environ, PROFTOP_SESSION_DIR=os.path.join(tmp, "sessions"))
    os.makedirs(env["PROFTOP_SESSION_DIR"], mode=0o700, exist_ok=True)
    return env


def minitrain_overhead(args, tmp):
    """minitrain's mean step time alone and under `proftop record` (probe
    loaded, reader attached and draining), alternating runs; medians."""
    mt = os.path.join(args.build, "examples", "minitrain")
    proftop = os.path.join(args.build, "proftop")
    if not os.path.exists(mt):
        return
    print()
    print("== minitrain step time with proftop attached vs without (median of 7 alternating runs)")
    env = session_env(tmp)
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


def launch_loss(args, tmp):
    """`proftop run` on a job that records from its first instant (flood,
    one thread, 2 s): the events proftop kept beside the events the job
    produced (kept + counted lost); what is lost at the start went before
    the reader attached, what is lost later while it read. Medians of 3."""
    flood = os.path.join(args.build, "examples", "flood")
    proftop = os.path.join(args.build, "proftop")
    if not os.path.exists(flood):
        return
    print()
    print("== proftop run on a job recording from its start (flood, 2 s): kept / produced, median of 3")
    env = session_env(tmp)
    for rate in (100_000, 1_000_000):
        kept, produced = [], []
        for _ in range(3):
            p = subprocess.run([proftop, "run", "--no-screen", "--log", os.path.join(tmp, "fl.log"), "--",
                                flood, "--rate", str(rate), "--seconds", "2", "--step-every", "1000"],
                               capture_output=True, env=env)
            line = [l for l in p.stdout.decode().splitlines() if l.startswith("Events: ")]
            if not line:
                sys.exit("proftop run printed no Events line")
            w = line[0].split()
            k, d = int(w[1]), int(w[6])  # Events: K kept of S seen, D dropped ...
            kept.append(k)
            produced.append(k + d)
        kept.sort()
        produced.sort()
        print("flood --rate %d: kept %d of %d produced (%.2f%%)"
              % (rate, kept[1], produced[1], 100.0 * kept[1] / produced[1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    proftop = os.path.join(args.build, "proftop")
    simd = os.path.join(args.build, "bench", "ref_simdjson")
    simd = simd if os.path.exists(simd) else None
    if not simd:
        print("(no %s/bench/ref_simdjson: the simdjson reference is skipped; make bench builds it"
              " where libsimdjson-dev is installed)" % args.build)
    orj = None  # a Python with orjson: .venv's once make bench installed it
    for py in (os.path.join(os.environ.get("PT_VENV", ".venv"), "bin", "python"), sys.executable):
        if os.path.exists(py) and subprocess.run([py, "-c", "import orjson"],
                                                 capture_output=True).returncode == 0:
            orj = py
            break
    if not orj:
        print("(no Python with orjson: its reference is skipped; make bench installs it in .venv)")
    traces = os.environ.get("PT_TRACES", "fixtures/traces")
    tmp = tempfile.mkdtemp(prefix="proftop-bench.")
    try:
        print("== import + aggregate (proftop report --json) vs python json.load + operator table,")
        print("   run alternately, medians of %d runs (wall seconds; cores = proftop CPU / wall)" % args.runs)
        print("%-44s %7s %9s %7s %4s %9s %7s" % ("file (uncompressed)", "MB", "proftop", "MB/s", "cores", "python", "ratio"))
        for rel in BIG:
            src = os.path.join(traces, rel)
            if not os.path.exists(src):
                print("%-44s skipped (not found)" % rel)
                continue
            plain = os.path.join(tmp, os.path.basename(rel)[:-3])
            with gzip.open(src, "rb") as fi, open(plain, "wb") as fo:
                shutil.copyfileobj(fi, fo)
            import_row(proftop, plain, args.runs, os.path.basename(plain), simd, orj)
            os.unlink(plain)
        big = os.path.join(tmp, "synth.json")
        synth(big, 2_000_000)
        import_row(proftop, big, args.runs, "synthetic PyTorch-style, 2 M events", simd, orj)
        os.unlink(big)
        ranks = merged_ranks(proftop, tmp, 4, 250_000)
        import_row(proftop, ranks, args.runs, "4 ranks merged, 1 M events")
        os.unlink(ranks)
        print()
        minitrain_overhead(args, tmp)
        launch_loss(args, tmp)
        src = os.path.join(traces, BIG[0])
        if os.path.exists(src):
            print()
            print("== export (proftop export) vs cat of the same output")
            out = os.path.join(tmp, "out.json")
            rep = json.loads(run([proftop, "report", src, "--json"], stdout=None)[2])
            n = rep.get("events", 0)
            te, tc = [], []
            for _ in range(args.runs):
                te.append(run([proftop, "export", src, "-o", out, "--force"])[0])
                tc.append(run(["sh", "-c", "cat %s > %s.copy" % (out, out)])[0])
            t, c = median(te), median(tc)
            print("events %d, export %.3fs (read + write) = %.2f M events/s; cat of the %.1f MB output %.3fs (medians of %d)"
                  % (n, t, n / t / 1e6, os.path.getsize(out) / 1e6, c, args.runs))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
