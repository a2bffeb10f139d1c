"""tests/python/test_proftop.py - python/proftop.py and its PyTorch helper.

Run with /usr/bin/python3 (Debian's python3-torch lives there):
    /usr/bin/python3 -m unittest discover -s tests/python -v

The no-op path needs nothing. The enabled path is tested against a fake
libproftop.so compiled here (needs cc) that logs every API call, so the exact
sequence of phases, operators and steps can be checked without the real probe
or a session reader. PyTorch tests are skipped when torch is not importable.
"""
import contextlib
import ctypes
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

os.environ.pop("PROFTOP_LIB", None)
os.environ.pop("PROFTOP_DISABLE", None)
import proftop  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:
    torch = None

FAKE_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
static char buf[1 << 20];
static size_t len;
static unsigned names;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *ids[256];
static void logf_(const char *fmt, const char *s, unsigned long long v)
{
	pthread_mutex_lock(&mu);
	if (len < sizeof buf - 256) {
		if (s) len += snprintf(buf + len, sizeof buf - len, fmt, s);
		else len += snprintf(buf + len, sizeof buf - len, fmt, v);
	}
	pthread_mutex_unlock(&mu);
}
int proftop_abi_version(void) { return 1; }
int proftop_enabled(void) { return 1; }
void proftop_step(uint64_t s) { logf_("step %llu\n", 0, s); }
void proftop_step_begin(void) { logf_("step_begin\n", 0, 0); }
void proftop_phase_push(int p) { logf_("P+%llu\n", 0, (unsigned long long)p); }
void proftop_phase_pop(void) { logf_("P-\n", 0, 0); }
void proftop_op_push(const char *n) { logf_("O+%s\n", n, 0); }
void proftop_op_pop(void) { logf_("O-\n", 0, 0); }
void proftop_range_push(const char *n) { logf_("R+%s\n", n, 0); }
void proftop_range_pop(void) { logf_("R-\n", 0, 0); }
uint32_t proftop_name(const char *n) {
	pthread_mutex_lock(&mu);
	unsigned id = ++names;
	ids[id & 255] = strdup(n);
	pthread_mutex_unlock(&mu);
	logf_("name %s\n", n, 0);
	return id;
}
void proftop_op_push_id(uint32_t id) { logf_("O+%s\n", ids[id & 255], 0); }
void proftop_range_push_id(uint32_t id) { logf_("R+%s\n", ids[id & 255], 0); }
void proftop_mark(const char *n) { logf_("mark %s\n", n, 0); }
void proftop_counter(const char *n, double v) { (void)v; logf_("counter %s\n", n, 0); }
const char *fake_take(void) {
	static char out[1 << 20];
	pthread_mutex_lock(&mu);
	memcpy(out, buf, len + 1);
	len = 0;
	buf[0] = 0;
	pthread_mutex_unlock(&mu);
	return out;
}
"""

_fake = {"dir": None, "path": None, "lib": None}


def fake_lib():
    """Builds the fake probe once; returns its path or None without a compiler."""
    if _fake["path"] is None and _fake["dir"] is None:
        cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
        _fake["dir"] = tempfile.mkdtemp(prefix="proftop-pytest.")
        if cc is None:
            return None
        src = os.path.join(_fake["dir"], "fake.c")
        # another soname: once loaded, proftop.load() must not find it as "libproftop.so"
        path = os.path.join(_fake["dir"], "libproftop-fake.so")
        with open(src, "w") as f:
            f.write(FAKE_C)
        r = subprocess.run([cc, "-shared", "-fPIC", "-pthread", "-Wl,-soname,libproftop-fake.so",
                            "-o", path, src], capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            return None
        _fake["path"] = path
    return _fake["path"]


def tearDownModule():
    # the fake probe's folder goes with the run (a loaded .so may be unlinked)
    if _fake["dir"]:
        shutil.rmtree(_fake["dir"], ignore_errors=True)


def enable_fake(test):
    path = fake_lib()
    if path is None:
        test.skipTest("no C compiler for the fake probe")
    os.environ["PROFTOP_LIB"] = path
    try:
        test.assertTrue(proftop.load())
    finally:
        del os.environ["PROFTOP_LIB"]
    lib = ctypes.CDLL(path)
    lib.fake_take.restype = ctypes.c_char_p
    _fake["lib"] = lib
    lib.fake_take()
    test.addCleanup(proftop.load)  # back to the no-op state (the fake is not preloaded)


def take():
    """The calls logged since the last take(), one string each, name lookups left out."""
    return [t for t in _fake["lib"].fake_take().decode().splitlines()
            if not t.startswith("name ")]


class NoOp(unittest.TestCase):
    def setUp(self):
        proftop.load()

    def test_disabled_without_library(self):
        self.assertFalse(proftop.enabled())
        self.assertEqual(proftop.name_id("x"), 0)

    def test_calls_are_noops(self):
        proftop.step(32)
        proftop.step()
        proftop.step_begin()
        with proftop.phase("forward"):
            with proftop.range("eval"):
                with proftop.op("matmul"):
                    pass
        proftop.phase_push("backward")
        proftop.phase_pop()
        proftop.range_push("x")
        proftop.range_pop()
        proftop.op_push("y")
        proftop.op_pop()
        proftop.mark("m")
        proftop.counter("c", 1.5)

        @proftop.range("decorated")
        def f(a):
            return a + 1
        self.assertEqual(f(1), 2)

    def test_bad_phase(self):
        with self.assertRaises(ValueError):
            proftop.phase("lunch")
        with self.assertRaises(ValueError):
            proftop.phase_push(9)
        self.assertIs(proftop.phase("forward"), proftop.phase("forward"))

    def test_scope_does_not_swallow_exceptions(self):
        with self.assertRaises(KeyError):
            with proftop.phase("forward"):
                raise KeyError("x")

    def test_disable_env(self):
        path = fake_lib()
        if path is None:
            self.skipTest("no C compiler")
        os.environ["PROFTOP_LIB"] = path
        os.environ["PROFTOP_DISABLE"] = "1"
        try:
            self.assertFalse(proftop.load())
        finally:
            del os.environ["PROFTOP_LIB"], os.environ["PROFTOP_DISABLE"]
            proftop.load()

    def test_missing_lib_path(self):
        os.environ["PROFTOP_LIB"] = "/nonexistent/libproftop.so"
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                self.assertFalse(proftop.load())
            self.assertIn("cannot load PROFTOP_LIB=/nonexistent/libproftop.so", err.getvalue())
        finally:
            del os.environ["PROFTOP_LIB"]
            proftop.load()
        self.assertFalse(proftop.enabled())


class Enabled(unittest.TestCase):
    def setUp(self):
        enable_fake(self)

    def test_sequence(self):
        self.assertTrue(proftop.enabled())
        with proftop.phase("dataloader"):
            pass
        with proftop.phase("forward"):
            with proftop.op("linear"):
                pass
            with proftop.op("linear"):
                pass
        with proftop.range("eval"):
            proftop.mark("here")
        proftop.step(64)
        self.assertEqual(take(), ["P+1", "P-", "P+2", "O+linear", "O-", "O+linear", "O-", "P-",
                                  "R+eval", "mark here", "R-", "step 64"])

    def test_threads(self):
        def work():
            for _ in range(100):
                with proftop.op("t"):
                    pass
        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        log = take()
        self.assertEqual(log.count("O+t"), 400)
        self.assertEqual(log.count("O-"), 400)
        self.assertEqual(len([t for t in log if t == "O+t"]), 400)


@unittest.skipIf(torch is None, "torch is not importable")
class Torch(unittest.TestCase):
    def setUp(self):
        enable_fake(self)
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                                         torch.nn.Linear(8, 2))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        xs = torch.randn(24, 4)
        ys = torch.randint(0, 2, (24,))
        self.loader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(xs, ys), batch_size=8)

    def loop(self, loader=None, steps=99):
        n = 0
        for x, y in (loader if loader is not None else self.loader):
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            n += 1
            if n >= steps:
                break
        return n

    def test_instrument_marks_phases_ops_and_steps(self):
        h = proftop.torch.instrument(self.model, self.opt, self.loader)
        self.assertEqual(self.loop(), 3)
        log = take()
        step = ["P+1", "P-", "P+2", "O+0 (Linear)", "O-", "O+1 (ReLU)", "O-", "O+2 (Linear)",
                "O-", "P-", "P+3", "P-", "P+4", "P-", "step 8"]
        self.assertEqual(log[:len(step)], step, log)
        self.assertEqual(log.count("step 8"), 3)
        self.assertEqual(log[-2:], ["P+1", "P-"])  # the fetch that ends the epoch
        pushes = sum(1 for t in log if t.startswith(("P+", "O+")))
        pops = sum(1 for t in log if t in ("P-", "O-"))
        self.assertEqual(pushes, pops)
        h.remove()
        h.remove()
        self.assertNotIn("step", vars(self.opt))
        self.assertIs(type(self.loader), torch.utils.data.DataLoader)
        self.assertFalse(torch.autograd.backward.__name__ == "_wrapped_backward")
        self.loop()
        self.assertEqual(take(), [])

    def test_all_submodules(self):
        model = torch.nn.Sequential(torch.nn.Sequential(torch.nn.Linear(4, 2)))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        with proftop.torch.instrument(model, opt, ops="all"):
            model(torch.randn(3, 4)).sum().backward()
            opt.step()
        self.assertEqual(take(), ["P+2", "O+0 (Sequential)", "O+0.0 (Linear)", "O-", "O-", "P-",
                                  "P+3", "P-", "P+4", "P-", "step 3"])

    def test_no_dataloader_counts_model_inputs(self):
        with proftop.torch.instrument(self.model, self.opt, ops=False):
            self.loop(steps=2)
        log = take()
        self.assertEqual(log.count("step 8"), 2)
        self.assertNotIn("P+1", log)
        self.assertNotIn("O-", log)

    def test_forward_exception_is_unwound(self):
        class Boom(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 2)
                self.fail = True

            def forward(self, x):
                x = self.lin(x)
                if self.fail:
                    raise RuntimeError("boom")
                return x
        m = Boom()
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        with proftop.torch.instrument(m, opt, self.loader):
            it = iter(self.loader)
            x, y = next(it)
            with self.assertRaises(RuntimeError):
                m(x)
            m.fail = False
            x, y = next(it)  # closes the Forward phase left open
            torch.nn.functional.cross_entropy(m(x), y).backward()
            opt.step()
        log = take()
        pushes = sum(1 for t in log if t.startswith(("P+", "O+")))
        pops = sum(1 for t in log if t in ("P-", "O-"))
        self.assertEqual(pushes, pops, log)
        self.assertEqual(log[-1], "step 16")  # both fetched batches count

    def test_lr_scheduler_after_instrument(self):
        with proftop.torch.instrument(self.model, self.opt, self.loader):
            sched = torch.optim.lr_scheduler.StepLR(self.opt, step_size=1, gamma=0.5)
            self.loop(steps=2)
            sched.step()
        self.assertEqual(take().count("step 8"), 2)
        self.assertAlmostEqual(self.opt.param_groups[0]["lr"], 0.05)

    def test_wrap_loader_for_plain_iterables(self):
        batches = list(self.loader)
        with self.assertRaises(TypeError):
            proftop.torch.instrument(self.model, self.opt, batches)
        self.assertNotIn("step", vars(self.opt))  # a failed instrument() undoes itself
        with proftop.torch.instrument(self.model, self.opt):
            self.loop(loader=proftop.torch.wrap_loader(batches))
        log = take()
        self.assertEqual(log.count("P+1"), 4)
        self.assertEqual(log.count("step 8"), 3)

    def test_noop_without_library(self):
        proftop.load()
        self.assertFalse(proftop.enabled())
        with proftop.torch.instrument(self.model, self.opt, self.loader):
            self.assertEqual(self.loop(), 3)
        self.assertEqual(take(), [])


if __name__ == "__main__":
    unittest.main()
