"""tests/python/test_auto.py - the zero-code PyTorch helper (python/proftop_auto.py).

Run with /usr/bin/python3 (Debian's python3-torch lives there):
    /usr/bin/python3 -m unittest discover -s tests/python -v

Each test runs a small PyTorch program in a fresh interpreter with a fake
libproftop.so (compiled here) that logs every call, and the helper installed
as proftop's sitecustomize would install it; the program's script never
mentions proftop. The log shows exactly which phases, operators and steps the
helper marked: step counting (gradient accumulation, optimizers back to back,
inference), samples, the module tree and its depth, balance when a forward
raises, the helper's own errors, an explicit proftop.torch.instrument() taking
over, an attach in the middle of a step, and multiprocessing children. The
fake's clock (proftop_now) counts calls, so step bounds are checked by order.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PYDIR = os.path.join(ROOT, "python")
sys.path.insert(0, HERE)
import forkrun  # noqa: E402  (scenarios forked after torch's import)

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

FAKE_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
static char buf[1 << 22];
static size_t len;
static uint64_t clk;
static unsigned names;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char ids[4096][128];
static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void logf_(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&mu);
	if (len < sizeof buf - 512) {
		va_start(ap, fmt);
		len += vsnprintf(buf + len, sizeof buf - len, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&mu);
}
int proftop_abi_version(void) { return 1; }
int proftop_enabled(void) { return 1; }
void proftop_step(uint64_t s) { logf_("step %llu\n", (unsigned long long)s); }
void proftop_step_begin(void) { logf_("step_begin\n"); }
void proftop_phase_push(int p) { logf_("P+%d\n", p); }
void proftop_phase_pop(void) { logf_("P-\n"); }
void proftop_op_push(const char *n) { logf_("O+%s\n", n); }
void proftop_op_pop(void) { logf_("O-\n"); }
void proftop_range_push(const char *n) { logf_("R+%s\n", n); }
void proftop_range_pop(void) { logf_("R-\n"); }
uint32_t proftop_name(const char *n) {
	pthread_mutex_lock(&mu);
	unsigned id = ++names & 4095;
	snprintf(ids[id], sizeof ids[id], "%s", n);
	pthread_mutex_unlock(&mu);
	return id;
}
void proftop_op_push_id(uint32_t id) { logf_("O+%s\n", ids[id & 4095]); }
void proftop_range_push_id(uint32_t id) { logf_("R+%s\n", ids[id & 4095]); }
void proftop_mark(const char *n) { logf_("mark %s\n", n); }
void proftop_counter(const char *n, double v) { (void)v; logf_("counter %s\n", n); }
uint64_t proftop_now(void) { return __atomic_add_fetch(&clk, 1, __ATOMIC_RELAXED); }
void proftop_step_tokens(uint64_t n) { logf_("tokens %llu\n", (unsigned long long)n); }
void proftop_step_span(uint64_t a, uint64_t b, uint64_t s) {
	logf_("span %llu %llu %llu\n", (unsigned long long)a, (unsigned long long)b,
	      (unsigned long long)s);
}
static int reader = 1;
int proftop_reader_attached(void) { return reader; }
void fake_set_reader(int r) { reader = r; }
const char *fake_take(void) {
	static char out[1 << 22];
	pthread_mutex_lock(&mu);
	memcpy(out, buf, len + 1);
	len = 0;
	buf[0] = 0;
	pthread_mutex_unlock(&mu);
	return out;
}
"""

# Run in the child: the helper installed as sitecustomize does, then the scenario.
PRELUDE = r"""
import ctypes, json, os, sys
sys.path.insert(0, %(pydir)r)
import torch
from torch import nn
import proftop, proftop_auto
_fake = ctypes.CDLL(os.environ["PROFTOP_LIB"])
_fake.fake_take.restype = ctypes.c_char_p
status = proftop_auto.install(torch, attach=%(attach)s)
def take():
    return [l for l in _fake.fake_take().decode().splitlines()]
def done(**extra):
    proftop_auto._at_exit()
    extra["log"] = take()
    extra["status"] = status
    print("RESULT " + json.dumps(extra))
torch.manual_seed(0)
"""

_fake = {"dir": None, "path": None}


def build_fake(source, prefix):
    """Compiles source into libproftop-fake.so in a new temporary folder:
    (folder, path), path None when there is no compiler or it failed."""
    d = tempfile.mkdtemp(prefix=prefix)
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        return d, None
    src = os.path.join(d, "fake.c")
    path = os.path.join(d, "libproftop-fake.so")
    with open(src, "w") as f:
        f.write(source)
    r = subprocess.run([cc, "-shared", "-fPIC", "-pthread", "-Wl,-soname,libproftop-fake.so",
                        "-o", path, src], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        return d, None
    return d, path


def fake_lib():
    if _fake["dir"] is None:
        _fake["dir"], _fake["path"] = build_fake(FAKE_C, "proftop-autotest.")
    return _fake["path"]


def tearDownModule():
    if _fake["dir"]:
        shutil.rmtree(_fake["dir"], ignore_errors=True)


def spans(log):
    """[(start, end, samples)] of the steps in the log."""
    out = []
    for line in log:
        if line.startswith("span "):
            a, b, s = (int(x) for x in line.split()[1:])
            out.append((a, b, s))
    return out


def balanced(test, log):
    depth = 0
    for line in log:
        if line.startswith(("P+", "O+")):
            depth += 1
        elif line in ("P-", "O-"):
            depth -= 1
            test.assertGreaterEqual(depth, 0, "a pop without a push")
    test.assertEqual(depth, 0, "ranges left open")


@unittest.skipUnless(HAVE_TORCH, "torch is not importable")
class Auto(unittest.TestCase):
    def run_scenario(self, code, env=None, attach=False, argv_extra=()):
        path = fake_lib()
        if path is None:
            self.skipTest("no C compiler for the fake probe")
        e = dict(os.environ)
        for k in ("PROFTOP_TORCH", "PROFTOP_TORCH_DEPTH", "PROFTOP_BATCH", "PROFTOP_TORCH_OPS",
                  "PROFTOP_DISABLE"):
            e.pop(k, None)
        e["PROFTOP_LIB"] = path
        e.update(env or {})
        prog = PRELUDE % {"pydir": PYDIR, "attach": attach} + textwrap.dedent(code)
        # PRELUDE imports torch first: a process forked from one that has (forkrun)
        rc, out, err = forkrun.run(prog, e, argv_extra, timeout=120)
        lines = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
        if rc != 0 or not lines:
            self.fail("scenario failed (rc %d):\n%s\n%s" % (rc, out[-2000:], err[-3000:]))
        return json.loads(lines[-1][len("RESULT "):])

    def test_accumulation_is_one_step(self):
        res = self.run_scenario("""
            model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
            opt = torch.optim.AdamW(model.parameters())
            for step in range(3):
                for micro in range(4):
                    model(torch.randn(5, 4)).sum().backward()
                opt.step()
                opt.zero_grad()
            done()
        """)
        s = spans(res["log"])
        self.assertEqual(len(s), 3)
        self.assertEqual([x[2] for x in s], [20, 20, 20])  # 4 x 5 samples, from the inputs
        for (a, b, _), (c, _, _) in zip(s, s[1:]):
            self.assertEqual(b, c, "steps are contiguous")
        self.assertIn("mark proftop: steps: one per optimizer step (torch %s, zero-code helper)"
                      % torch.__version__, res["log"])
        self.assertEqual(res["log"].count("P+3"), 12)  # every backward
        self.assertEqual(res["log"].count("O+AdamW.step"), 3)
        self.assertEqual(res["log"].count("O+AdamW.zero_grad"), 3)
        self.assertIn("O+0 (Linear)", res["log"])
        balanced(self, res["log"])

    def test_hand_update_one_step_per_backward(self):
        # no torch.optim (word_language_model's update): one step per backward,
        # past the 32 it takes to be sure no optimizer comes, and at the end
        res = self.run_scenario("""
            model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
            for step in range(40):
                model(torch.randn(5, 4)).sum().backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= 0.01 * p.grad
                        p.grad = None
            done()
        """)
        s = spans(res["log"])
        self.assertEqual(len(s), 40)
        self.assertEqual([x[2] for x in s], [5] * 40)
        for (a, b, _), (c, _, _) in zip(s, s[1:]):
            self.assertEqual(b, c, "steps are contiguous")
        self.assertTrue(any(x.startswith("mark proftop: steps: one per backward") for x in res["log"]))
        balanced(self, res["log"])

    def test_optimizers_back_to_back_one_step_apart_two(self):
        res = self.run_scenario("""
            a, b = nn.Linear(4, 4), nn.Linear(4, 1)
            oa = torch.optim.SGD(a.parameters(), lr=0.1)
            ob = torch.optim.SGD(b.parameters(), lr=0.1)
            sched = torch.optim.lr_scheduler.StepLR(oa, 10)
            for i in range(3):  # both optimizers step together: one step
                b(a(torch.randn(2, 4))).sum().backward()
                oa.step(); ob.step(); sched.step()
            n_together = len([l for l in take() if l.startswith("span ")])
            for i in range(3):  # a GAN-like loop: each optimizer after its own forward
                a(torch.randn(2, 4)).sum().backward(); oa.step()
                b(torch.randn(2, 4)).sum().backward(); ob.step()
            done(together=n_together)
        """)
        self.assertEqual(res["together"], 2)  # the third closes at the next forward
        self.assertEqual(len(spans(res["log"])), 1 + 6)

    def test_gan_one_step_per_batch_and_models_apart(self):
        res = self.run_scenario("""
            from torch.utils.data import DataLoader, TensorDataset
            loader = DataLoader(TensorDataset(torch.randn(12, 4)), batch_size=3)
            netG = nn.Sequential(nn.Linear(2, 4))
            netD = nn.Sequential(nn.Linear(4, 1))
            optD = torch.optim.Adam(netD.parameters())
            optG = torch.optim.Adam(netG.parameters())
            for (real,) in loader:  # D on real and fake, then G: one iteration per batch
                netD.zero_grad()
                netD(real).mean().backward()
                fake = netG(torch.randn(5, 2))
                netD(fake.detach()).mean().backward()
                optD.step()
                netG.zero_grad()
                netD(fake).mean().backward()
                optG.step()
            done()
        """)
        s = spans(res["log"])
        self.assertEqual(len(s), 4)
        self.assertEqual([x[2] for x in s], [3, 3, 3, 3])  # the loader's batch, not G's noise
        self.assertTrue(any("one per batch fetched" in l for l in res["log"]))
        ops = set(l[2:] for l in res["log"] if l.startswith("O+"))
        self.assertIn("netG.0 (Linear)", ops)
        self.assertIn("netD.0 (Linear)", ops)
        balanced(self, res["log"])

    def test_one_batch_trained_many_times_steps_per_optimizer(self):
        res = self.run_scenario("""
            from torch.utils.data import DataLoader, TensorDataset
            loader = DataLoader(TensorDataset(torch.randn(8, 4)), batch_size=4)
            m = nn.Linear(4, 1)
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            (x,) = next(iter(loader))  # one batch, then 20 steps on it
            for i in range(20):
                m(x).sum().backward(); opt.step(); opt.zero_grad()
            done()
        """)
        s = spans(res["log"])
        self.assertEqual(len(s), 20)
        self.assertTrue(all(a < b for a, b, _ in s))
        self.assertEqual([b for _, b, _ in s[:-1]], [a for a, _, _ in s[1:]])  # contiguous
        self.assertFalse(any("one per batch fetched" in l for l in res["log"]))

    def test_sequence_first_samples(self):
        res = self.run_scenario("""
            from torch.utils.data import DataLoader
            class LM(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.emb = nn.Embedding(50, 8)
                    self.rnn = nn.LSTM(8, 8)  # batch_first=False: (seq, batch)
                    self.out = nn.Linear(8, 50)
                def forward(self, x):
                    return self.out(self.rnn(self.emb(x))[0])
            model = LM()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for i in range(3):  # hand-made batches (seq 35, batch 6), as word_language_model
                x = torch.randint(0, 50, (35, 6))
                model(x).sum().backward(); opt.step(); opt.zero_grad()
            def pad(items):  # a collate_fn that makes (seq, batch)
                return torch.stack(items, 1)
            loader = DataLoader([torch.randint(0, 50, (35,)) for _ in range(14)],
                                batch_size=4, collate_fn=pad)
            for x in loader:
                model(x).sum().backward(); opt.step(); opt.zero_grad()
            done()
        """)
        self.assertEqual([x[2] for x in spans(res["log"])], [6, 6, 6, 4, 4, 4, 2])
        # token ids: each step's (seq, batch) input, right after its step
        toks = [int(l.split()[1]) for l in res["log"] if l.startswith("tokens ")]
        self.assertEqual(toks, [35 * 6] * 3 + [35 * 4] * 3 + [35 * 2])
        order = [l.split()[0] for l in res["log"] if l.startswith(("span ", "tokens "))]
        self.assertEqual(order, ["span", "tokens"] * 7)

    def test_optimizer_phase_holds_the_whole_step_call(self):
        # torch's own step wrapper (the profiler's record_function; on 2.x the
        # global hooks), put on the class by the first optimizer, runs inside
        # the Optimization phase: ours is the outermost, on the class that
        # defines step, and the inner one passes through
        res = self.run_scenario("""
            m = nn.Linear(3, 1)
            a = torch.optim.Adam(m.parameters())
            b = torch.optim.Adam(m.parameters())
            outer = torch.optim.Adam.step in sys.modules["proftop_phases"]._ours
            m(torch.randn(2, 3)).sum().backward(); a.step(); b.step()
            done(outer=outer)
        """)
        self.assertTrue(res["outer"])
        self.assertEqual(res["log"].count("O+Adam.step"), 2)
        balanced(self, res["log"])

    def test_generator_feed_is_the_dataloader(self):
        res = self.run_scenario("""
            import sys
            def batches(n):
                for i in range(n):
                    yield torch.randn(4, 3)
            class Feed(object):  # an iterator class: its __next__ is timed too
                def __init__(self, n): self.n = n
                def __iter__(self): return self
                def __next__(self):
                    if not self.n: raise StopIteration
                    self.n -= 1
                    return torch.randn(2, 3)
            m = nn.Linear(3, 1)
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            def mine(mod):  # a generator of the script's own, looped over in the step
                for p in mod.parameters():
                    yield p
            def train(feed):
                for x in feed:
                    m(x).sum().backward(); opt.step(); opt.zero_grad()
                    total = sum(p.numel() for p in m.parameters())  # a genexpr: not a feed
                    for p in m.parameters():  # torch's generator: not a feed
                        pass
                    for p in mine(m):  # a loop that does not hold the model's call
                        pass
            train(batches(3))
            gen_log = take()
            train(Feed(2))
            done(gen_log=gen_log, prof=repr(sys.getprofile()))
        """)
        # the generator: its 2nd and 3rd batches and the StopIteration (the
        # loop is known from the first forward on); the iterator class: its
        # second batch and its StopIteration (the first is in the phase the
        # last StopIteration opened: it lasts to the next forward, as a
        # DataLoader's next epoch starts in its fetch); never the generator
        # expression, torch's parameters() or a loop in the step over the
        # script's own generator
        self.assertEqual(res["gen_log"].count("P+1"), 3)
        self.assertEqual(res["log"].count("P+1"), 2)
        self.assertEqual([x[2] for x in spans(res["gen_log"] + res["log"])], [4, 4, 4, 2, 2])
        self.assertEqual(res["prof"], "None")  # not left on after the loop
        balanced(self, res["gen_log"] + res["log"])

    def test_generator_fetches_marked_in_order(self):
        res = self.run_scenario("""
            def batches(n):
                for i in range(n):
                    yield torch.randn(4, 3)
            m = nn.Linear(3, 1)
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            for x in batches(3):
                m(x).sum().backward(); opt.step()
            done()
        """)
        log = res["log"]
        # each fetch after the first forward: a Dataloader phase (1) closed before the forward (2)
        phases = [l for l in log if l.startswith("P+")]
        self.assertEqual(phases[:4], ["P+2", "P+3", "P+4", "P+1"])
        self.assertEqual(phases.count("P+1"), 3)  # the 2nd and 3rd batches, and the StopIteration
        self.assertEqual([x[2] for x in spans(log)], [4, 4, 4])
        balanced(self, log)

    def test_dataloader_job_sets_no_profile_function(self):
        res = self.run_scenario("""
            import sys
            from torch.utils.data import DataLoader, TensorDataset
            loader = DataLoader(TensorDataset(torch.randn(12, 3)), batch_size=4)
            m = nn.Linear(3, 1)
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            seen = []
            for (x,) in loader:
                m(x).sum().backward(); opt.step()
                seen.append(sys.getprofile() is not None)
            done(seen=seen)
        """)
        self.assertEqual(res["seen"], [False, False, False])

    def test_c_wrappers_in_and_faithful(self):
        # the C wrappers (_proftop_fast) where PROFTOP_TORCH_FAST names the
        # built extension: operators below the root, an exception through an
        # inner module, an explicitly bound __call__, the signature tools
        # read, a Dataset's __getitem__; and the Python wrapper back in once
        # torch.compile is called (Dynamo traces Python, not C)
        want = os.environ.get("PROFTOP_TORCH_FAST", "")
        if not want.endswith(".so"):
            self.skipTest("the C wrappers are not asked for (PROFTOP_TORCH_FAST=PATH)")
        res = self.run_scenario("""
            import inspect
            kinds = [type(nn.Module.__call__).__name__]
            class Boom(Exception):
                pass
            class Inner(nn.Module):
                def forward(self, x):
                    if x.sum() > 1e9:
                        raise Boom("big")
                    return x * 2
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a = Inner()
                    self.b = nn.Linear(2, 2)
                def forward(self, x):
                    return self.b(self.a.__call__(x))
            class DS(torch.utils.data.Dataset):
                def __len__(self):
                    return 4
                def __getitem__(self, i):
                    return torch.ones(2) * i
            m = Net()
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            for x in torch.utils.data.DataLoader(DS(), batch_size=2):
                m(x).sum().backward()
                opt.step()
            caught = []
            try:
                m(torch.full((1, 2), 1e10))
            except Boom as e:
                caught.append(str(e))
            sig = str(inspect.signature(nn.Module.__call__))
            calls = proftop_auto._fast.calls()
            if hasattr(torch, "compile"):
                torch.compile(m)
            kinds.append(type(nn.Module.__call__).__name__)
            done(kinds=kinds, caught=caught, sig=sig, calls=calls, compile=hasattr(torch, "compile"))
        """)
        self.assertEqual(res["kinds"], ["ModuleCall", "function" if res["compile"] else "ModuleCall"])
        self.assertEqual(res["caught"], ["big"])
        balanced(self, res["log"])
        self.assertEqual(res["log"].count("O+a (Inner)"), 3)
        self.assertEqual(res["log"].count("O+b (Linear)"), 2)
        self.assertEqual(res["log"].count("R+data: DS.__getitem__"), 4)
        self.assertGreaterEqual(res["calls"], 3 + 2 + 4)
        self.assertTrue(res["sig"].startswith("(self"), res["sig"])

    def test_c_paths_record_as_python_does(self):
        # the C paths that follow the step (the outermost module call, the
        # optimizer's and scheduler's calls, backward, a DataLoader's fetch
        # and the step ending there) take a loop's common case and leave the
        # rest to the Python wrappers: the probe sees exactly the calls, in
        # the order and with the values, that the Python wrappers alone make
        # (the fake clock counts its reads, so a read more or less shows)
        want = os.environ.get("PROFTOP_TORCH_FAST", "")
        if not want.endswith(".so"):
            self.skipTest("the C wrappers are not asked for (PROFTOP_TORCH_FAST=PATH)")
        prog = """
            from torch.utils.data import DataLoader, Dataset
            class Pics(Dataset):
                def __len__(self):
                    return 24
                def __getitem__(self, i):
                    return torch.full((3,), float(i)), i % 2
            class Toks(Dataset):
                def __len__(self):
                    return 12
                def __getitem__(self, i):
                    return torch.arange(5) + i
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
                    self.head = nn.Linear(4, 2)
                def forward(self, x):
                    return self.head(self.body(x))
            m, crit = Net(), nn.CrossEntropyLoss()
            opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
            sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
            for epoch in range(2):  # a new iterator each epoch
                for x, y in DataLoader(Pics(), batch_size=4):
                    opt.zero_grad()
                    crit(m(x), y).backward()
                    opt.step()
                    sched.step()
            for i, (x, y) in enumerate(DataLoader(Pics(), batch_size=3)):  # accumulation
                crit(m(x), y).backward()
                if i % 2:
                    opt.step()
                    opt.zero_grad()
            for i, (x, y) in enumerate(DataLoader(Pics(), batch_size=4)):
                crit(m(x), y).backward()
                opt.step()
                opt.zero_grad()
                if i % 2:  # now and then a look at the batch after the step
                    with torch.no_grad():
                        m(x)
            for b in DataLoader(list(range(12)), batch_size=4, collate_fn=list):
                # no tensor in the batch: the samples are the forward's input's
                x = torch.full((len(b), 3), 1.0)
                crit(m(x), torch.zeros(len(b), dtype=torch.long)).backward()
                opt.step()
            g, d = nn.Linear(2, 3), nn.Linear(3, 1)  # two optimizers a batch (a GAN)
            og = torch.optim.Adam(g.parameters())
            od = torch.optim.Adam(d.parameters())
            for x, y in DataLoader(Pics(), batch_size=6):
                od.zero_grad(); d(x).mean().backward(); od.step()
                og.zero_grad(); d(g(x[:, :2])).mean().backward(); og.step()
            emb = nn.Sequential(nn.Embedding(20, 3), nn.Linear(3, 1))  # token ids
            oe = torch.optim.SGD(emb.parameters(), lr=0.1)
            for t in DataLoader(Toks(), batch_size=4):
                emb(t).sum().backward(); oe.step()
            class Boom(Exception):
                pass
            class Bad(nn.Module):
                def forward(self, x):
                    raise Boom("forward")
            class BadSGD(torch.optim.SGD):
                def step(self, closure=None):
                    raise Boom("step")
            bad, bad_opt, caught = Bad(), BadSGD(m.parameters(), lr=0.1), []
            for x, y in DataLoader(Pics(), batch_size=8):  # raising calls in the stride
                for call in (lambda: bad(x), bad_opt.step):
                    try:
                        call()
                    except Boom as e:
                        caught.append(str(e))
                crit(m(x), y).backward()
                opt.step()
            with torch.no_grad():
                m.eval()
                for x, y in DataLoader(Pics(), batch_size=8):  # inference
                    m(x)
            import proftop_auto
            taken = list(proftop_auto._fast.taken()) if proftop_auto._fast_on else None
            done(taken=taken, caught=caught)
        """
        fast = self.run_scenario(prog)
        slow = self.run_scenario(prog, env={"PROFTOP_TORCH_FAST": "0"})
        self.assertIsNone(slow["taken"])
        root, step, fetch = fast["taken"]
        self.assertGreaterEqual(root, 2 * 6 * 2, fast["taken"])   # model and loss a step
        self.assertGreaterEqual(step, 4 * 6 * 2, fast["taken"])   # zero_grad, backward, step, sched
        self.assertGreaterEqual(fetch, 6 * 2 - 2, fast["taken"])  # each epoch's first is Python's
        self.assertGreater(len(spans(fast["log"])), 20)
        self.assertEqual(fast["caught"], ["forward", "step"] * 3)
        balanced(self, fast["log"])
        self.assertEqual(fast["log"], slow["log"])

    def test_modules_the_map_lacks(self):
        # a submodule registered after the first call, and one the model
        # holds outside its module tree: operators of their own, no error
        res = self.run_scenario("""
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a = nn.Linear(3, 3)
                    self.hidden = [nn.Tanh()]  # not registered under the model
                def forward(self, x):
                    x = self.hidden[0](self.a(x))
                    return self.b(x) if hasattr(self, "b") else x
            m = Net()
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            m(torch.randn(2, 3)).sum().backward(); opt.step()
            m.b = nn.Linear(3, 1)
            m(torch.randn(2, 3)).sum().backward(); opt.step()
            done()
        """)
        ops = set(l[2:] for l in res["log"] if l.startswith("O+"))
        self.assertIn("b (Linear)", ops)
        self.assertIn("(Tanh)", ops)
        self.assertFalse([l for l in res["log"] if "caught an error" in l])

    def test_scheduler_in_init_is_not_a_phase(self):
        res = self.run_scenario("""
            m = nn.Linear(2, 2)
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0)
            before = take()
            m(torch.randn(1, 2)).sum().backward(); opt.step(); sched.step()
            done(before=before)
        """)
        self.assertNotIn("P+4", res["before"])
        self.assertIn("O+LambdaLR.step", res["log"])

    def test_inference_one_step_per_forward_then_training(self):
        res = self.run_scenario("""
            model = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
            with torch.no_grad():
                for i in range(5):
                    model(torch.randn(3, 4))
            inference = take()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            loss_fn = nn.MSELoss()
            for i in range(2):  # forward, loss, backward, step: one step each
                loss_fn(model(torch.randn(6, 4)), torch.zeros(6, 4)).backward()
                opt.step()
            done(inference=inference)
        """)
        inf = res["inference"]
        self.assertEqual(len(spans(inf)), 4)  # the fifth closes at the next forward
        self.assertEqual([x[2] for x in spans(inf)], [3, 3, 3, 3])
        self.assertTrue(any("one per outermost model forward" in l for l in inf))
        # the fifth inference forward, then two whole training steps
        s = spans(res["log"])
        self.assertEqual(len(s), 3)
        self.assertEqual([x[2] for x in s], [3, 6, 6])
        self.assertIn("O+loss: MSELoss", res["log"])
        self.assertTrue(any("one per optimizer step" in l for l in res["log"]))

    def test_dataloader_samples_and_phase(self):
        res = self.run_scenario("""
            from torch.utils.data import DataLoader, TensorDataset
            data = TensorDataset(torch.randn(40, 3), torch.randn(40, 1))
            loader = DataLoader(data, batch_size=5)
            m = nn.Linear(3, 1)
            opt = torch.optim.SGD(m.parameters(), lr=0.01)
            for i, (x, y) in enumerate(loader):  # two micro-batches per step
                ((m(x) - y) ** 2).mean().backward()
                if i % 2 == 1:
                    opt.step(); opt.zero_grad()
            done()
        """)
        s = spans(res["log"])
        self.assertEqual(len(s), 4)
        self.assertEqual([x[2] for x in s], [10, 10, 10, 10])
        self.assertEqual(res["log"].count("P+1"), 10)  # iter(), 8 batches, the StopIteration
        balanced(self, res["log"])

    def test_batch_and_depth_switches(self):
        res = self.run_scenario("""
            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.inner = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
                def forward(self, x):
                    return self.inner(x)
            model = nn.Sequential(Block(), Block())
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for i in range(2):
                model(torch.randn(4, 2)).sum().backward(); opt.step()
            done()
        """, env={"PROFTOP_BATCH": "7", "PROFTOP_TORCH_DEPTH": "2"})
        self.assertEqual([x[2] for x in spans(res["log"])], [7, 7])
        ops = sorted(set(l[2:] for l in res["log"] if l.startswith("O+")))
        self.assertIn("0 (Block)", ops)
        self.assertIn("1.inner (Sequential)", ops)
        self.assertNotIn("1.inner.0 (Linear)", ops)  # depth 3
        self.assertIn("depth 2, batch 7", res["status"])

    def test_raising_forward_balanced_and_unchanged(self):
        res = self.run_scenario("""
            class Boom(Exception):
                pass
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a = nn.Linear(2, 2)
                    self.n = 0
                def forward(self, x):
                    self.n += 1
                    y = self.a(x)
                    if self.n % 2 == 0:
                        raise Boom("odd %d" % self.n)
                    return y.sum()
            m = Net()
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            caught = []
            for i in range(6):
                try:
                    m(torch.randn(1, 2)).backward(); opt.step()
                except Boom as e:
                    caught.append((type(e).__name__, str(e)))
            done(caught=caught)
        """)
        self.assertEqual(res["caught"], [["Boom", "odd 2"], ["Boom", "odd 4"], ["Boom", "odd 6"]])
        balanced(self, res["log"])
        self.assertEqual(res["log"].count("P+2"), 6)

    def test_helper_errors_never_reach_the_script(self):
        res = self.run_scenario("""
            def broken(*a):
                raise RuntimeError("injected failure")
            proftop_auto._lib = type("L", (), {})()
            for name in ("proftop_phase_push", "proftop_phase_pop", "proftop_op_push_id",
                         "proftop_op_pop", "proftop_step_span"):
                setattr(proftop_auto._lib, name, broken)
            lib = proftop.lib()
            proftop_auto._lib.proftop_now = lib.proftop_now
            proftop_auto._lib.proftop_mark = lib.proftop_mark
            proftop_auto._lib.proftop_name = lib.proftop_name
            m = nn.Sequential(nn.Linear(2, 2))
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            out = []
            for i in range(5):
                y = m(torch.ones(1, 2)).sum()
                y.backward(); opt.step()
                out.append(round(float(y), 4))
            done(out=out, errors=proftop_auto._errors)
        """)
        self.assertEqual(len(res["out"]), 5)
        self.assertGreater(res["errors"], 5)
        marks = [l for l in res["log"] if "caught an error of its own" in l]
        self.assertEqual(len(marks), 1)
        self.assertIn("RuntimeError: injected failure", marks[0])
        self.assertTrue(any("caught %d errors" % res["errors"] in l for l in res["log"]))

    def test_explicit_instrument_takes_over(self):
        res = self.run_scenario("""
            m = nn.Linear(2, 1)
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            m(torch.randn(3, 2)).sum().backward(); opt.step()
            h = proftop.torch.instrument(m, opt)
            take()
            for i in range(3):
                m(torch.randn(3, 2)).sum().backward(); opt.step()
            done()
        """)
        log = res["log"]
        self.assertEqual(spans(log), [])  # no zero-code steps any more
        self.assertEqual(log.count("step 3"), 3)  # instrument()'s own, once each
        self.assertEqual(log.count("P+2"), 3)
        # and no word at exit that there were none: the script marks its own
        self.assertEqual([ln for ln in log if "no steps" in ln], [])

    def test_attach_skips_the_partial_step(self):
        res = self.run_scenario("""
            m = nn.Linear(2, 1)
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            for i in range(4):
                m(torch.randn(2, 2)).sum().backward(); opt.step()
            done()
        """, attach=True)
        # attached "mid-step": the first step (up to the first boundary) is not counted
        self.assertEqual(len(spans(res["log"])), 3)

    def test_attach_goes_quiet_without_reader(self):
        res = self.run_scenario("""
            _fake.fake_set_reader(0)
            proftop_auto._QUIET_NS = 0
            m = nn.Linear(2, 1)
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            for i in range(3):
                m(torch.randn(2, 2)).sum().backward(); opt.step()
            quiet = proftop_auto._off
            n_quiet = len(take())
            for i in range(3):
                m(torch.randn(2, 2)).sum().backward(); opt.step()
            n_after = len(take())
            done(quiet=quiet, n_after=n_after)
        """, attach=True)
        self.assertTrue(res["quiet"])
        self.assertEqual(res["n_after"], 0)

    def test_multiprocessing_child_is_left_alone(self):
        res = self.run_scenario("""
            m = nn.Linear(2, 1)
            m(torch.randn(2, 2))
            done()
        """, argv_extra=["--multiprocessing-fork"])
        self.assertIn("multiprocessing child", res["status"])
        self.assertEqual(res["log"], [])

    def test_no_loop_says_so(self):
        res = self.run_scenario("""
            m = nn.Linear(2, 1)
            done()
        """)
        self.assertTrue(any("no steps: torch %s was imported" % torch.__version__ in l
                            for l in res["log"]))

    def test_threads_each_close_their_steps(self):
        res = self.run_scenario("""
            import threading
            m = nn.Linear(4, 4).eval()
            def work():
                with torch.no_grad():
                    for i in range(10):
                        m(torch.randn(2, 4))
            ts = [threading.Thread(target=work) for _ in range(3)]
            for t in ts: t.start()
            for t in ts: t.join()
            import gc; gc.collect()
            done()
        """)
        self.assertEqual(len(spans(res["log"])), 30)
        balanced(self, res["log"])


@unittest.skipUnless(HAVE_TORCH, "torch is not importable")
class Boot(unittest.TestCase):
    """python/boot/sitecustomize.py: chains the shadowed sitecustomize, waits for torch."""

    def test_chains_and_defers(self):
        d = tempfile.mkdtemp(prefix="proftop-boot.")
        self.addCleanup(shutil.rmtree, d, True)
        with open(os.path.join(d, "sitecustomize.py"), "w") as f:
            f.write("import builtins\nbuiltins.PROFTOP_TEST_CHAINED = True\n")
        e = dict(os.environ)
        e["PYTHONPATH"] = os.path.join(PYDIR, "boot") + os.pathsep + d
        e.pop("PROFTOP_LIB", None)
        code = ("import sys, builtins\n"
                "print(getattr(builtins, 'PROFTOP_TEST_CHAINED', False), 'torch' in sys.modules,"
                " 'proftop_auto' in sys.modules)\n"
                "import torch\n"
                "print('proftop_auto' in sys.modules, sys.modules['proftop_auto'].status())\n")
        r = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        first, second = r.stdout.splitlines()[:2]
        self.assertEqual(first, "True False False")  # chained; torch not imported by us
        # no probe loaded: the helper is imported with torch, and stays off
        self.assertEqual(second, "True not installed")

    def test_off_switch(self):
        e = dict(os.environ)
        e["PYTHONPATH"] = os.path.join(PYDIR, "boot")
        e["PROFTOP_TORCH"] = "0"
        r = subprocess.run([sys.executable, "-c",
                            "import sys, torch; print('proftop_auto' in sys.modules)"],
                           env=e, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.stdout.strip(), "False", r.stderr)


if __name__ == "__main__":
    unittest.main()
