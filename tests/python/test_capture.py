"""tests/python/test_capture.py - deep capture on demand, the job's side
(python/proftop_capture.py, driven by proftop_auto at step boundaries).

Run with /usr/bin/python3 (Debian's python3-torch):
    /usr/bin/python3 -m unittest discover -s tests/python -v

Each test runs a small training loop in a fresh interpreter with a fake
libproftop.so (test_auto's logging fake plus the control word): the script
"asks" for a capture by setting the request word the way a reader would,
and the log shows what the helper answered and when, between which steps.
Checked: the profiler starts and stops at step boundaries and covers
exactly the steps asked for; the trace is complete JSON with the sync
marker, torch's operators, their input shapes and FLOPs, on the stepping
thread's id; cancelling, the job exiting, torch's profiler failing to start
(as when another tool holds CUPTI) and an old torch without torch.profiler
each end in a clear answer with no file, the profiler off and the job going
on.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import forkrun  # noqa: E402
import test_auto  # noqa: E402  (its fake probe, extended below)

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PYDIR = os.path.join(ROOT, "python")

CTL_C = r"""
#include <stdlib.h>
static uint64_t req, at_step;
static int gpu;
uint64_t proftop_control(void) { return __atomic_load_n(&req, __ATOMIC_ACQUIRE); }
uint64_t proftop_control_at_step(void) { return __atomic_load_n(&at_step, __ATOMIC_RELAXED); }
void fake_set_request(uint64_t w) { __atomic_store_n(&req, w, __ATOMIC_RELEASE); }
void fake_set_at_step(uint64_t s) { __atomic_store_n(&at_step, s, __ATOMIC_RELAXED); }
void fake_set_gpu(int g) { gpu = g; }
void proftop_control_caps(uint32_t c) { logf_("caps %u\n", c); }
void proftop_control_answer(uint32_t seq, uint32_t st, uint32_t done, const char *msg)
{
	logf_("answer %u %u %u %s\n", seq, st, done, msg ? msg : "-");
}
void proftop_capture_report(uint64_t t0, uint64_t t1, uint64_t lo, uint64_t hi, uint64_t sb,
			    uint64_t pb, uint64_t w, int32_t tid, uint32_t first)
{
	logf_("report %llu %llu %llu %llu %d %u\n", (unsigned long long)t0, (unsigned long long)t1,
	      (unsigned long long)lo, (unsigned long long)hi, (int)tid, first);
}
int proftop_capture_path(uint32_t seq, char *buf, uint32_t len)
{
	const char *d = getenv("FAKE_CAPDIR");
	return d && snprintf(buf, len, "%s/cap-%u.json", d, seq) < (int)len ? 0 : -1;
}
int proftop_gpu_collector(void) { return gpu; }
"""

PRELUDE = r"""
import ctypes, json, os, sys, threading
sys.path.insert(0, %(pydir)r)
import torch
from torch import nn
import proftop, proftop_auto
_fake = ctypes.CDLL(os.environ["PROFTOP_LIB"])
_fake.fake_take.restype = ctypes.c_char_p
_fake.fake_set_request.argtypes = [ctypes.c_uint64]
_fake.fake_set_at_step.argtypes = [ctypes.c_uint64]
status = proftop_auto.install(torch)
def take():
    return [l for l in _fake.fake_take().decode().splitlines()]
def ask(seq, steps, flags=0, at=0):
    _fake.fake_set_at_step(at)
    if at:
        flags |= 4  # PT_SHM_CTL_AT_STEP
    _fake.fake_set_request((seq << 32) | (flags << 16) | steps)
def done(**extra):
    proftop_auto._at_exit()
    extra["log"] = take()
    extra["status"] = status
    extra["tid"] = threading.get_native_id()
    ka = getattr(torch.autograd, "kineto_available", None)
    extra["kineto"] = bool(ka()) if ka is not None else False
    print("RESULT " + json.dumps(extra))
torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.ReLU(), nn.Flatten(),
                      nn.Linear(4 * 4 * 4, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
def train(n, at=None, hook=None):
    for i in range(n):
        if hook is not None and i == at:
            hook()
        x = torch.randn(2, 3, 8, 8)
        model(x).sum().backward()
        opt.step()
        opt.zero_grad()
"""

_fake = {"dir": None, "path": None}


def fake_lib():
    if _fake["dir"] is None:
        _fake["dir"], _fake["path"] = test_auto.build_fake(test_auto.FAKE_C + CTL_C,
                                                           "proftop-captest.")
    return _fake["path"]


def tearDownModule():
    if _fake["dir"]:
        shutil.rmtree(_fake["dir"], ignore_errors=True)


def answers(log):
    """[(index in log, seq, state, done, msg)]"""
    out = []
    for i, line in enumerate(log):
        if line.startswith("answer "):
            p = line.split(" ", 4)
            out.append((i, int(p[1]), int(p[2]), int(p[3]), p[4]))
    return out


def span_lines(log):
    return [i for i, line in enumerate(log) if line.startswith("span ")]


@unittest.skipUnless(test_auto.HAVE_TORCH, "torch is not importable")
class Capture(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="proftop-cap.")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_scenario(self, code):
        path = fake_lib()
        if path is None:
            self.skipTest("no C compiler for the fake probe")
        e = dict(os.environ)
        for k in ("PROFTOP_TORCH", "PROFTOP_TORCH_DEPTH", "PROFTOP_BATCH", "PROFTOP_TORCH_OPS",
                  "PROFTOP_DISABLE"):
            e.pop(k, None)
        e["PROFTOP_LIB"] = path
        e["FAKE_CAPDIR"] = self.dir
        prog = PRELUDE % {"pydir": PYDIR} + textwrap.dedent(code)
        # PRELUDE imports torch first: a process forked from one that has (forkrun)
        rc, out, err = forkrun.run(prog, e, timeout=300)
        lines = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
        if rc != 0 or not lines:
            self.fail("scenario failed (rc %d):\n%s\n%s" % (rc, out[-2000:], err[-3000:]))
        return json.loads(lines[-1][len("RESULT "):])

    def files(self):
        return sorted(os.path.basename(p) for p in glob.glob(os.path.join(self.dir, "*")))

    def test_stop_leaves_the_event_list_to_the_writer(self):
        # torch 1.x without CUDA timing: the step that stops the profiler
        # only ends recording; the event list is built in the writer thread
        res = self.run_scenario("""
            import proftop_capture as pc
            seen = {}
            orig = pc._Capture.stop
            def stop(self):
                r = orig(self)
                seen["enabled"] = bool(torch.autograd._profiler_enabled())
                seen["deferred"] = self.unparsed is not None
                seen["thread"] = threading.current_thread().name
                return r
            pc._Capture.stop = stop
            origp = pc._Capture._parse
            def parse(self):
                if self.unparsed is not None:
                    seen["parsed_in"] = threading.current_thread().name
                return origp(self)
            pc._Capture._parse = parse
            train(2)
            ask(1, 2)
            train(5)
            if pc._writer is not None:
                pc._writer.join(60)
            done(seen=seen, version=torch.__version__)
        """)
        seen = res["seen"]
        self.assertFalse(seen["enabled"], "recording ended at the stop")
        split = res["version"].startswith("1.") or res["version"].startswith("2.0")
        self.assertEqual(seen["deferred"], split)
        if split:
            self.assertEqual(seen["parsed_in"], "proftop-capture")
            self.assertNotEqual(seen["thread"], "proftop-capture")
        self.assertTrue(any(ln.startswith("answer 1 4 2") for ln in res["log"]), res["log"])
        # the trace has the operators with their shapes all the same
        with open(os.path.join(self.dir, "cap-1.json")) as f:
            tr = json.load(f)
        conv = [e for e in tr["traceEvents"] if e["name"] == "aten::conv2d"]
        self.assertEqual(len(conv), 2)
        self.assertEqual(conv[0]["args"]["Input Dims"][0], [2, 3, 8, 8])

    def test_capture_three_steps(self):
        res = self.run_scenario("""
            train(3)
            ask(1, 3)
            train(6)
            done()
        """)
        log = res["log"]
        # the helper answers requests; caps 3 where torch has Kineto (2.x), 1 on 1.13
        self.assertIn("caps %d" % (3 if res["kineto"] else 1), log)
        a = answers(log)
        spans = span_lines(log)
        # started at a step boundary: right after a step was recorded
        run0 = [x for x in a if x[2] == 2 and x[3] == 0]
        self.assertEqual(len(run0), 1, log)
        first = run0[0][0]
        self.assertTrue(log[first - 1].startswith("span "), log[first - 3:first + 1])
        # progress after each captured step, then stopped at the third
        self.assertEqual([x[3] for x in a if x[2] == 2], [0, 1, 2])
        writing = [x for x in a if x[2] == 3]
        self.assertEqual(len(writing), 1)
        self.assertEqual(writing[0][3], 3)
        captured = [i for i in spans if first < i < writing[0][0]]
        self.assertEqual(len(captured), 3, "three steps between start and stop")
        self.assertTrue(log[writing[0][0] - 1].startswith("span "))
        done = [x for x in a if x[2] == 4]
        self.assertEqual(len(done), 1, log)
        self.assertIn("legacy profiler" if "legacy" in done[0][4] else "kineto profiler",
                      done[0][4])
        # the capture's times: t0 <= lo <= hi <= t1, on the stepping thread
        rep = [ln for ln in log if ln.startswith("report ")][0].split()
        t0, t1, lo, hi, tid, first = (int(v) for v in rep[1:])
        self.assertTrue(t0 <= lo <= hi <= t1)
        self.assertEqual(tid, res["tid"])
        # the first captured step's number: three steps were recorded before it
        self.assertEqual(first, 3)
        # the trace: whole JSON, the marker, aten ops with shapes and FLOPs
        self.assertEqual(self.files(), ["cap-1.json"])
        with open(os.path.join(self.dir, "cap-1.json")) as f:
            trace = json.load(f)
        ev = trace["traceEvents"] if isinstance(trace, dict) else trace
        names = [e.get("name") for e in ev]
        self.assertEqual(names.count("proftop/sync#1"), 1)
        convs = [e for e in ev if e.get("name") == "aten::conv2d"]
        self.assertEqual(len(convs), 3, "one conv per captured step")
        for c in convs:
            self.assertEqual(c["args"]["Input Dims"][:2], [[2, 3, 8, 8], [4, 3, 3, 3]])
            # torch's own figure: 2 * 2*4*4*4 outputs * 3*3*3, where its export
            # writes one (1.13's events through the helper; torch 2.15's Kineto
            # export has none: proftop computes FLOPs from the shapes, test_capture.sh)
            if "flops" in c["args"] or not res["kineto"]:
                self.assertEqual(c["args"]["flops"], 2 * 2 * 4 * 16 * 27)
            self.assertEqual(c["tid"], res["tid"])
        self.assertFalse(any(n.startswith("ProfilerStep#") for n in names if n))
        test_auto.balanced(self, log)

    def test_capture_at_a_step(self):
        # every rank is asked for the same steps: the helper waits for the
        # step named, answering that it waits, and captures from it on
        res = self.run_scenario("""
            train(2)
            ask(1, 2, at=6)
            train(10)
            done()
        """)
        log = res["log"]
        a = answers(log)
        waiting = [x for x in a if x[2] == 1]
        self.assertEqual(len(waiting), 1, log)
        self.assertIn("waiting for step 6 (now at step 2)", waiting[0][4])
        run0 = [x for x in a if x[2] == 2 and x[3] == 0]
        self.assertEqual(len(run0), 1, log)
        # four steps recorded between the answer and the start: 2, 3, 4, 5
        between = [i for i in span_lines(log) if waiting[0][0] < i < run0[0][0]]
        self.assertEqual(len(between), 4, log)
        rep = [ln for ln in log if ln.startswith("report ")][0].split()
        self.assertEqual(int(rep[6]), 6, "the first captured step is the one asked for")
        self.assertEqual([x[1] for x in a if x[2] == 4], [1])

    def test_capture_at_a_step_passed_or_cancelled(self):
        res = self.run_scenario("""
            train(5)
            ask(1, 2, at=3)
            train(2)
            ask(2, 2, at=100)
            train(2)
            ask(2, 2, flags=2, at=100)  # withdrawn while it waits
            train(3)
            done()
        """)
        a = answers(res["log"])
        failed = [x for x in a if x[2] == 5]
        self.assertEqual(len(failed), 1, res["log"])
        self.assertEqual(failed[0][1], 1)
        self.assertIn("step 3 had begun already: this rank is at step 5", failed[0][4])
        cancelled = [x for x in a if x[2] == 6]
        self.assertEqual([x[1] for x in cancelled], [2], res["log"])
        self.assertIn("cancelled before it started", cancelled[0][4])
        self.assertFalse(any(x[2] == 2 for x in a), "nothing ran")
        self.assertEqual(self.files(), [])

    def test_exit_while_waiting_for_the_step(self):
        res = self.run_scenario("""
            train(2)
            ask(1, 2, at=50)
            train(3)
            done()
        """)
        cancelled = [x for x in answers(res["log"]) if x[2] == 6]
        self.assertEqual(len(cancelled), 1, res["log"])
        self.assertIn("the job exited before step 50", cancelled[0][4])

    def test_cancel_while_running(self):
        res = self.run_scenario("""
            train(2)
            ask(1, 50)
            train(3)
            ask(1, 50, 2)  # withdrawn
            train(3)
            done()
        """)
        a = answers(res["log"])
        self.assertTrue(any(x[2] == 2 for x in a))
        cancelled = [x for x in a if x[2] == 6]
        self.assertEqual(len(cancelled), 1, res["log"])
        self.assertIn("cancelled after", cancelled[0][4])
        self.assertEqual(self.files(), [], "nothing written")
        # the profiler is off again: a capture can start afterwards
        self.assertFalse(any(x[2] == 3 for x in a))

    def test_second_capture_and_file_cleanup(self):
        res = self.run_scenario("""
            ask(1, 1)
            train(4)
            import time
            time.sleep(0.5)   # the first one is written
            ask(2, 2)
            train(5)
            done()
        """)
        a = answers(res["log"])
        self.assertEqual([x[1] for x in a if x[2] == 4], [1, 2], res["log"])
        self.assertEqual(self.files(), ["cap-2.json"], "the previous capture's file is removed")

    def test_exit_during_capture(self):
        res = self.run_scenario("""
            ask(1, 100)
            train(4)
            done()
        """)
        a = answers(res["log"])
        cancelled = [x for x in a if x[2] == 6]
        self.assertEqual(len(cancelled), 1, res["log"])
        self.assertIn("the job exited after 3 of 100 steps", cancelled[0][4])
        self.assertEqual(self.files(), [])

    def test_profiler_fails_to_start(self):
        res = self.run_scenario("""
            import torch.profiler
            def broken(self):
                raise RuntimeError("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED")
            torch.profiler.profile.start = broken
            ask(1, 2)
            train(4)
            ok = not torch.autograd._profiler_enabled()
            done(profiler_off=ok)
        """)
        a = answers(res["log"])
        failed = [x for x in a if x[2] == 5]
        self.assertEqual(len(failed), 1, res["log"])
        self.assertIn("torch.profiler could not start", failed[0][4])
        self.assertIn("MULTIPLE_SUBSCRIBERS", failed[0][4])
        self.assertTrue(res["profiler_off"])
        self.assertEqual(len(span_lines(res["log"])), 4, "the job went on")
        self.assertEqual(self.files(), [])

    def test_user_profiler_already_running(self):
        res = self.run_scenario("""
            with torch.autograd.profiler.profile():
                ask(1, 2)
                train(4)
            done()
        """)
        # refused, and the script's own profiler ends normally (the scenario
        # would fail if ours had stopped it)
        a = answers(res["log"])
        self.assertEqual([(x[1], x[2]) for x in a], [(1, 5)], res["log"])
        self.assertIn("already running", a[0][4])
        self.assertEqual(len(span_lines(res["log"])), 4, "the job went on")

    def test_old_torch_without_torch_profiler(self):
        res = self.run_scenario("""
            torch.profiler = None   # torch before 1.8.1 has only the autograd profiler
            ask(1, 2)
            train(4)
            done()
        """)
        a = answers(res["log"])
        done_ = [x for x in a if x[2] == 4]
        self.assertEqual(len(done_), 1, res["log"])
        self.assertIn("autograd profiler", done_[0][4])
        with open(os.path.join(self.dir, "cap-1.json")) as f:
            ev = json.load(f)["traceEvents"]
        self.assertTrue(any(e["name"] == "aten::conv2d" for e in ev))

    def test_request_from_before_the_helper_is_ignored(self):
        res = self.run_scenario("""
            # a fresh install looks at the word once: what was there is not new
            proftop_auto._ctl._seen = (7 << 32) | 3
            ask(7, 3)
            train(3)
            done()
        """)
        self.assertEqual(answers(res["log"]), [])


if __name__ == "__main__":
    unittest.main()
