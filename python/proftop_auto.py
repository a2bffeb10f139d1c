"""proftop_auto.py - marks an unmodified PyTorch job for proftop.

`proftop run|record|serve -- python train.py` puts python/boot/ on PYTHONPATH;
its sitecustomize.py waits for `import torch` (it never imports torch itself)
and then calls install(torch). `proftop -p PID --inject` calls install() in a
running job. From then on, with no change to the script:

- Forward: the outermost nn.Module call on a thread is the Forward phase;
  every module call below it is an operator named by its qualified name and
  type, "features.0 (Conv2d)", down to PROFTOP_TORCH_DEPTH levels of calls
  below it (default 3; a ModuleList or ModuleDict is not a level, since it is
  never called). A loss module (torch.nn.modules.loss._Loss) called
  on its own is a Forward phase with the operator "loss: CrossEntropyLoss".
- Backward: torch.autograd.backward (which Tensor.backward calls) and
  torch.autograd.grad; the outermost call on a thread.
- Optimization: step() and zero_grad() of every torch.optim.Optimizer
  subclass (user-defined ones too: wrapped per class when the first instance
  is made), and LR schedulers' step(); operators "SGD.step", "StepLR.step".
- Dataloader: each __next__ of a torch.utils.data.DataLoader iterator, with
  workers or without, and iter(loader) itself (starting the workers); without
  a DataLoader, each resume of the generator (or Python __next__) the loop
  draws its batches from, up to the next model call (_feed_prof).
- Steps: in a training job (a backward or an optimizer step has been seen),
  one step per optimizer step: a step ends when its last optimizer, zero_grad
  or scheduler call returns, and the next begins there, so steps are
  contiguous like torch.profiler's ProfilerStep (evaluation between epochs
  lands in the first step after it). Gradient accumulation (several
  forward/backward per optimizer step) and optimizers stepping back to back
  are one step; optimizers stepping apart (a GAN's D and G) are one step
  when a fetch bounds the iteration (one batch per iteration), else one
  step each. Until then (inference, evaluation loops) one step per outermost
  forward: under torch.no_grad()/inference_mode or in eval mode at once;
  otherwise (it may be a training step's first forward) only when a
  DataLoader fetch follows before any backward. The step ends once the next
  one begins (or when its thread or the program ends), with
  proftop_step_span.
- Samples per step: the batch dimension of what the DataLoader yields in the
  step (summed over gradient accumulation; the dimension equal to its
  batch_size), else of the outermost forwards' inputs (dim 1 of a
  sequence-first model's (seq, batch) input); PROFTOP_BATCH=N fixes it.
- Two models called at the top: each one's operators carry its name
  ("netG.main.0 (Linear)"), so they never merge.

How: Module.__call__, Optimizer.__init__ and the methods above are wrapped
(try/finally, so a forward that raises still closes its ranges at once, and
the exception reaches the script unchanged). torch's global module hooks
were measured slower (they switch every module call to torch's slow path and
cost two Python calls) and, before torch 2.1, are not called when a forward
raises. Inside torch.compile tracing the wrappers step aside. An exception of
the helper's own is caught, counted and reported once as a note; it never
reaches the script. DataLoader workers (fork, spawn or forkserver) record
their data stages only, into the training process's session; torch's
launchers record nothing. An explicit proftop.torch.instrument() in the script takes
over: the helper stands down, so nothing is counted twice.

Switches: PROFTOP_TORCH=0 (off), PROFTOP_TORCH_DEPTH=N, PROFTOP_BATCH=N,
PROFTOP_TORCH_OPS=1 (aten operators through emit_nvtx, CUDA builds only).
"""

import atexit
import ctypes
import functools
import os
import sys
import threading
import types

import proftop

__all__ = ["install", "stand_down", "status"]

_DATALOADER, _FORWARD, _BACKWARD, _OPTIMIZATION = 1, 2, 3, 4

# Module globals read on every hooked call (LOAD_GLOBAL is cached).
_off = True            # hooks pass straight through
_lib = None            # ctypes library (proftop.lib())
_max_depth = 3
_batch_fixed = 0       # PROFTOP_BATCH
_train = False         # a backward or optimizer step has been seen
_compiling = None      # torch.compiler.is_compiling, when torch has it
_grad_enabled = None   # torch.is_grad_enabled
_loss_base = ()        # torch.nn.modules.loss._Loss
_wrapper_roots = ()    # DistributedDataParallel, DataParallel: labelled from .module
_containers = ()       # ModuleList, ModuleDict: never called, not a level of depth

_tls = threading.local()
_ncalls = 0            # wrapped calls the Python wrappers handled (_fast counts its own)
_all_ts = None         # WeakSet of every live thread's state
_lock = threading.Lock()
_labels = None         # WeakKeyDictionary root -> {id(module): (name_id, depth)}
_torch = None
_installed = False
_errors = 0
_attach = False        # installed into a running job: skip the first partial step
_activity = False      # any hooked call ran
_steps = 0             # steps emitted
_ctl = None            # proftop_capture, when the probe has the control word
_rule = None           # "optimizer" / "backward" / "forward": the rule of the last step emitted
_opt_seen = False      # an optimizer step ran: steps end at optimizer steps
_bwd_rule = False      # no optimizer step in BWD_RULE_AFTER backwards: one step per backward
BWD_RULE_AFTER = 32    # (gradient accumulation steps the optimizer after several backwards)
_batch_rule = False    # a step held several optimizer steps between two fetches (a GAN)
_fetch_rule_off = False  # HOLD_MAX optimizer steps without a fetch: the loop does not fetch
HOLD_MAX = 8           # one batch per iteration, so each optimizer step ends a step again
_multi_root = False    # two models are called at the top: module labels carry the root's name
_roots = None          # WeakSet of the modules called outermost (losses aside)
_comp = None           # proftop_compile, when torch has torch.compile
_step_tokens = None    # proftop_step_tokens, when the probe has it


def _find_fast():
    """_proftop_fast (python/_proftop_fast.c): the per-call paths in C, from
    this file's directory (an installed proftop) or python/ beside the
    loaded libproftop.so (a build tree); None where it is not there or does
    not load (the pure-Python wrappers do the same, slower), and with
    PROFTOP_TORCH_FAST=0 (PROFTOP_TORCH_FAST=PATH: that file)."""
    want = os.environ.get("PROFTOP_TORCH_FAST", "")
    if want == "0" or sys.version_info < (3, 8):
        return None
    name = "_proftop_fast.abi3.so"
    paths = [want] if want.endswith(".so") else [os.path.join(_here, name)]
    lib = proftop.lib()
    if lib is not None and not want:
        try:
            class _DlInfo(ctypes.Structure):
                _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                            ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]
            info = _DlInfo()
            dladdr = ctypes.CDLL(None).dladdr
            dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
            if dladdr(ctypes.cast(lib.proftop_op_pop, ctypes.c_void_p), ctypes.byref(info)) \
                    and info.fname:
                lib_dir = os.path.dirname(os.fsdecode(info.fname))
                paths.append(os.path.join(lib_dir, "python", name))
        except Exception:  # noqa: BLE001 - then this file's directory only
            pass
    for path in paths:
        if not os.path.isfile(path):
            continue
        try:
            import importlib.machinery
            import importlib.util
            loader = importlib.machinery.ExtensionFileLoader("_proftop_fast", path)
            spec = importlib.util.spec_from_file_location("_proftop_fast", path, loader=loader)
            mod = importlib.util.module_from_spec(spec)
            loader.exec_module(mod)
            return mod
        except Exception:  # noqa: BLE001 - an extension this Python cannot load
            return None
    return None


_here = os.path.dirname(os.path.abspath(__file__))  # the helper's files
_fast = _find_fast()
_fast_on = False       # _fast.setup() done: its wrappers go in where the Python ones would
_TS_C = ("depth", "names", "compiling")  # the fields _fast.TSBase holds, where C reads them


class _TS(_fast.TSBase if _fast is not None else object):
    """One thread's state: module depth, open ranges, the step being built."""
    __slots__ = (() if _fast is not None else _TS_C) + ("root", "in_bwd", "in_opt", "in_fetch", "start", "pending", "soft",
                 "loader_samples", "fwd_samples", "loader_tokens", "fwd_tokens", "partial", "hooked", "bwd_end",
                 "bwd_marks", "fetches", "held", "gen_open", "__weakref__")

    def __init__(self):
        self.depth = 0            # nn.Module calls open on this thread
        self.names = None         # label map of the outermost module being called
        self.root = None          # that module
        self.in_bwd = self.in_opt = self.in_fetch = False
        self.start = None         # ns: the open step began here
        self.pending = None       # ns: the open step ends here unless more optimizer calls come
        self.soft = None          # ns: a forward with gradients ended, no backward seen yet
        self.loader_samples = 0
        self.fwd_samples = 0
        self.loader_tokens = 0    # token ids (integer inputs) in the step, for tokens/s
        self.fwd_tokens = 0
        self.partial = _attach    # attached mid-step: the first step is not whole
        self.compiling = 0        # torch.compile compiles on this thread (proftop_compile)
        self.hooked = None        # the optimizer whose step the global step hooks opened
        self.bwd_end = False      # a backward ended and no optimizer steps: the step ends
                                  # where the next forward, backward or fetch begins
        self.bwd_marks = []       # those ends, (ns, samples), until the backward rule holds
        self.fetches = 0          # DataLoader fetches in the step being built
        self.held = []            # optimizer-step ends followed by more work before the next
                                  # fetch: (ns, samples so far); the step may go on (a GAN's G)
        self.gen_open = False     # a Dataloader phase opened at a generator's resume (_feed_prof)

    def __del__(self):
        # The thread has ended (its thread-local data goes away while it still
        # runs, on its own ring): its last step ends here too.
        try:
            if self.pending is None:
                self.pending = self.soft
            if self.pending is None and self.held:
                self.pending = self.held[-1][0]
            self.held = []
            _feed_close(self)
            if not _opt_seen and not _off:
                _bwd_flush(self)
            if self.pending is None and self.bwd_end and not _opt_seen:
                self.pending = _now()
            if self.pending is not None and not _off:
                _emit_step(self)
            if _ctl is not None:
                _ctl.thread_ended(self)
        except Exception:  # noqa: BLE001
            pass


def _ts():
    try:
        return _tls.ts
    except AttributeError:
        ts = _tls.ts = _TS()
        if _fast_on:
            try:
                _fast.bind_ts(ts)  # where the C wrappers find it
            except Exception as e:  # noqa: BLE001
                _fail(e)
        with _lock:
            _all_ts.add(ts)
        return ts


def _fail(exc):
    """An error of the helper's own: counted, said once, never raised."""
    global _errors
    _errors += 1
    if _errors == 1:
        try:
            msg = "%s: %s" % (type(exc).__name__, exc)
            _lib.proftop_mark(("proftop: the Python helper caught an error of its own and "
                               "carries on (the job is unaffected): %s" % msg[:300])
                              .encode("utf-8", "replace"))
        except Exception:
            pass


def _now():
    return _lib.proftop_now()


# ---- steps

def _emit_step(ts):
    """Closes the open step at ts.pending; the next one starts there."""
    global _steps, _rule
    if _ctl is not None and _ctl._cap is not None:
        stopped = _ctl.before_emit(ts)  # a capture's last step: its stop counts in it
        if stopped is not None:
            ts.pending = stopped
    end = ts.pending
    ts.pending = ts.soft = None
    start = ts.start if ts.start is not None else end
    ts.start = end
    samples = _batch_fixed or ts.loader_samples or ts.fwd_samples
    tokens = ts.loader_tokens or ts.fwd_tokens
    ts.loader_samples = ts.fwd_samples = ts.loader_tokens = ts.fwd_tokens = 0
    ts.fetches = 0
    if ts.partial:
        ts.partial = False  # attached mid-step: steps start at this boundary
        if _ctl is not None:
            _control(ts)
        return
    rule = ("forward" if not _train else "backward" if not _opt_seen
            else "batch" if _batch_rule and not _fetch_rule_off else "optimizer")
    if rule != _rule:
        _rule = rule
        if rule == "batch":
            text = ("proftop: steps: one per batch fetched: several optimizers step between "
                    "two DataLoader fetches (a GAN's D and G) and are one training iteration "
                    "(torch %s, zero-code helper)" % _torch.__version__)
        elif rule == "optimizer":
            text = ("proftop: steps: one per optimizer step (torch %s, zero-code helper)"
                    % _torch.__version__)
        elif rule == "backward":
            text = ("proftop: steps: one per backward, each up to the next forward: no "
                    "optimizer step seen (weights updated by hand?) (torch %s, zero-code "
                    "helper)" % _torch.__version__)
        else:
            text = ("proftop: steps: one per outermost model forward: no optimizer step or "
                    "backward seen (torch %s, zero-code helper)" % _torch.__version__)
        _lib.proftop_mark(text.encode())
    _lib.proftop_step_span(start, end, samples)
    if tokens and _step_tokens is not None:
        _step_tokens(tokens)
    _steps += 1
    if _helper_stats is not None:
        _helper_stats(_helper_calls(), _cost_ps)
    if _ctl is not None:
        _control(ts)
    if _attach:
        _check_reader()


def _control(ts):
    """Once per step: what proftop asked for (a deep capture, proftop_capture.py)."""
    try:
        _ctl.boundary(ts, _steps)
    except Exception as e:  # noqa: BLE001
        _fail(e)


def _begin(ts, fetch=False):
    """A fetch, outermost forward, backward or optimizer step begins."""
    global _batch_rule
    if fetch and ts.pending is None and ts.soft is not None:
        ts.pending = ts.soft  # forward, forward, fetch and no backward: inference
    if ts.pending is not None and not fetch and ts.fetches and _opt_seen and not _fetch_rule_off:
        # an optimizer stepped and more work follows before the next fetch
        # (a GAN's G after its D): the batch's iteration may not be over
        _hold(ts)
    elif fetch and ts.held:
        if ts.pending is None:
            ts.pending = ts.held[-1][0]  # the iteration ended at its last optimizer step
        if len(ts.held) > 1 or ts.pending != ts.held[-1][0]:
            _batch_rule = True  # two or more optimizer steps in one batch's iteration
        ts.held = []
    if ts.bwd_end:
        ts.bwd_end = False
        if ts.pending is None and not _opt_seen:
            # backward, (a hand-written update), then this: a step's end once
            # the backward rule holds; until then kept (an optimizer may
            # still come: gradient accumulation)
            if _bwd_rule:
                ts.pending = _now()
            else:
                _bwd_mark(ts, _now())
    if ts.pending is not None:
        _emit_step(ts)
    if ts.start is None:
        ts.start = _now()
    if fetch:
        ts.fetches += 1


def _hold(ts):
    """The step's end is kept, not emitted, until the next fetch says whether
    the iteration went on; past HOLD_MAX optimizer steps without a fetch the
    loop does not fetch a batch per iteration (it trains on one batch): the
    kept ends become steps, and every optimizer step ends one from then on."""
    global _fetch_rule_off
    ts.held.append((ts.pending,) + _counts(ts))
    ts.pending = None
    if len(ts.held) <= HOLD_MAX:
        return
    _fetch_rule_off = True
    marks, ts.held = ts.held, []
    _emit_marks(ts, marks)


def _saw_opt(ts):
    """An optimizer steps: steps end at optimizer steps from now on (the
    backward rule's kept ends are dropped: this step ends at this one)."""
    global _opt_seen
    if not _opt_seen:
        _opt_seen = True
        ts.bwd_end = False
        ts.bwd_marks = []


def _bwd_mark(ts, now):
    """A backward-rule step end while it is not yet sure that no optimizer
    comes; after BWD_RULE_AFTER of them the rule holds and they are steps."""
    global _bwd_rule
    # the sample counts so far, not reset: an optimizer that comes after all
    # finds its step's samples whole
    ts.bwd_marks.append((now,) + _counts(ts))
    if len(ts.bwd_marks) >= BWD_RULE_AFTER:
        _bwd_rule = True
        _bwd_flush(ts)


def _bwd_flush(ts):
    """The kept backward-rule ends become steps, in order."""
    marks, ts.bwd_marks = ts.bwd_marks, []
    _emit_marks(ts, marks)


def _counts(ts):
    """The open step's sample and token counts so far."""
    return ts.loader_samples, ts.fwd_samples, ts.loader_tokens, ts.fwd_tokens


def _set_counts(ts, c):
    ts.loader_samples, ts.fwd_samples, ts.loader_tokens, ts.fwd_tokens = c


def _emit_marks(ts, marks):
    """Kept step ends [(ns, counts so far: _counts)] become steps, in order;
    the counts after the last stay with the open step."""
    if not marks:
        return
    total = _counts(ts)
    prev = (0, 0, 0, 0)
    for m in marks:
        ts.pending = m[0]
        _set_counts(ts, tuple(x - y for x, y in zip(m[1:], prev)))
        prev = m[1:]
        _emit_step(ts)
    _set_counts(ts, tuple(x - y for x, y in zip(total, prev)))


def _set_train():
    global _train
    if not _train:
        _train = True
        # the forward-end boundaries of the inference rule no longer hold
        with _lock:
            for ts in list(_all_ts):
                ts.pending = ts.soft = None


_batch_size = proftop.batch_size
_first_tensor = proftop.first_tensor
_seq_first_types = ()  # RNNs and attention layers, when their batch_first is False


def _tokens(t):
    """Token ids in t: its numel when it holds integer indices (a language
    model's input), else 0."""
    if t.is_floating_point() or t.is_complex() or t.dtype is _torch.bool:
        return 0
    return int(t.numel())


def _fwd_batch(names, args):
    """(samples, tokens) in an outermost forward's inputs: the first
    dimension of the first tensor, or the second for a sequence-first model
    (an RNN or attention layer with batch_first=False in its tree) fed token
    ids (seq, batch) or features (seq, batch, feature); tokens: _tokens."""
    t = _first_tensor(args)
    if t is None:
        return 0, 0
    shape = t.shape
    if names is not None and names.get(-2) and len(shape) in (2, 3) and (
            len(shape) == 3 or not t.is_floating_point()):
        return int(shape[1]), _tokens(t)
    return int(shape[0]), _tokens(t)


def _loader_batch(it, out):
    """(samples, tokens) in what a DataLoader iterator returned: the dimension that
    equals the loader's batch_size (the second for a collate_fn that pads
    sequences to (seq, batch)), found on a full batch and kept for the
    iterator's later ones, else the first."""
    t = _first_tensor(out)
    if t is None:
        return 0, 0
    shape = t.shape
    dim = getattr(it, "_proftop_dim", None)
    if dim is None:
        bs = getattr(it, "_proftop_bs", None)
        dim = 0
        if bs and len(shape) >= 2 and shape[0] != bs and shape[1] == bs:
            dim = 1
        if bs and shape[dim] == bs:
            try:
                it._proftop_dim = dim
            except Exception:  # noqa: BLE001 - an iterator with __slots__
                pass
    return (int(shape[dim]) if dim < len(shape) else int(shape[0])), _tokens(t)


# ---- a loop fed by a generator or any iterator that is not a DataLoader
#
# What a for loop or next() draws batches from is timed when it is Python
# code: a generator (or a class's __next__) resumed from the training loop's
# own frame. Only while the loop is outside the model, backward and
# optimizer calls (armed when the outermost one returns, disarmed when the
# next begins) is a profile function set on the thread (sys.setprofile); at
# the first resume from the loop it opens a Dataloader phase, the fetch's
# start (a step boundary, like a DataLoader fetch), and takes itself off at
# once, so the generator's own work runs unprofiled; the phase ends where
# the next model, loss, backward or optimizer call begins. Never while a
# DataLoader feeds the job (its fetches are timed as such), another
# profiler is set (cProfile, a debugger), or a deep capture runs.

_feed_on = True        # no DataLoader fetch seen: a generator may feed the loop
_feed_look = 16        # root calls left whose calling frames name the loop (_loop_codes)
_loop_codes = {}       # code of the frames that call the model -> the offsets of those calls
_for_iters = {}        # such a code -> {offset of a FOR_ITER: offset where its loop ends}
_torch_dir = "\0"      # torch's files (set at install): not the script's frames
_CO_GENERATOR = 0x20


def _script_frames(f, limit):
    """The frames from f outward, at most limit of them, that are the
    script's own: not torch's, the helper's or the import system's."""
    for _ in range(limit):
        if f is None:
            return
        fn = f.f_code.co_filename
        if not (fn.startswith(_torch_dir) or fn.startswith(_here) or fn.startswith("<frozen")):
            yield f
        f = f.f_back


def _feed_learn():
    """The code objects of the frames, outside torch and the helper, that the
    model is called from: the loop whose fetches are timed."""
    global _feed_look
    _feed_look -= 1
    try:
        f = sys._getframe(2)
    except (AttributeError, ValueError):
        return
    for f in _script_frames(f, 8):
        _loop_codes.setdefault(f.f_code, set()).add(f.f_lasti)


def _loop_ends(code):
    """{offset of each FOR_ITER in code: the offset its loop ends at}."""
    ends = _for_iters.get(code)
    if ends is None:
        import dis
        ends = _for_iters[code] = {i.offset: i.argval for i in dis.get_instructions(code)
                                   if i.opname == "FOR_ITER" and isinstance(i.argval, int)}
    return ends


def _feed_prof(frame, event, arg):
    """The profile function of the gap between steps: a generator or a
    __next__ resumed from the loop begins a fetch."""
    if event != "call":
        return
    try:
        if _off or _forked or not _feed_on:
            sys.setprofile(None)
            return
        co = frame.f_code
        if not (co.co_flags & _CO_GENERATOR or co.co_name == "__next__") or co.co_name[:1] == "<":
            return  # not a feed (a generator expression, a list comprehension)
        if co.co_filename.startswith(_torch_dir):
            return  # model.parameters() and the like
        back = frame.f_back
        calls = _loop_codes.get(back.f_code) if back is not None else None
        if calls is None:
            return
        end = _loop_ends(back.f_code).get(back.f_lasti)
        if end is not None and not any(back.f_lasti < c < end for c in calls):
            return  # a for loop that does not hold the model's call (over a list of params)
        sys.setprofile(None)
        ts = _ts()
        if ts.gen_open or ts.depth or ts.in_bwd or ts.in_opt or ts.in_fetch or ts.compiling:
            return
        _begin(ts, fetch=True)
        _lib.proftop_phase_push(_DATALOADER)
        ts.gen_open = True
    except Exception as e:  # noqa: BLE001
        _fail(e)


def _feed_arm(ts):
    """An outermost model, loss, backward or optimizer call returned: the
    loop may fetch its next batch."""
    if (_feed_on and _loop_codes and not ts.depth and not ts.in_bwd and not ts.in_opt and
            not ts.in_fetch and not ts.gen_open and sys.getprofile() is None and
            (_ctl is None or _ctl._cap is None)):
        sys.setprofile(_feed_prof)


def _feed_disarm(ts):
    """Such a call begins: the fetch, if one began, ends here."""
    if not _feed_on and not ts.gen_open:
        return  # a DataLoader feeds the job (a profile function left armed removes itself)
    if sys.getprofile() is _feed_prof:
        sys.setprofile(None)
    if ts.gen_open:
        ts.gen_open = False
        _lib.proftop_phase_pop()


def _feed_close(ts):
    """The thread ends: the fetch open on it ends."""
    if ts.gen_open:
        ts.gen_open = False
        try:
            _lib.proftop_phase_pop()
        except Exception:  # noqa: BLE001
            pass


# ---- module labels

def _name_id(text):
    return _lib.proftop_name(text.encode("utf-8", "replace"))


def _build_labels(root):
    """{id(module): (name id or 0 past the depth, depth)} for root's module tree.
    Depth counts the modules a call goes through: a ModuleList or ModuleDict
    is never called, so its items sit at its own depth ("blocks.0.layers.1"
    is depth 2 below the root: blocks.0, then its layers.1)."""
    base = root
    if isinstance(root, _wrapper_roots) and hasattr(root, "module"):
        base = root.module  # DDP(model): label model's modules, no "module." prefix
    m = {}
    comp = _compiled_of(base)
    if comp is not None:
        # torch.compile(model): the compiled region is one operator, named
        # by the model's class; its modules run inside it, unseen
        m[-1] = _name_id("(compiled %s)" % type(comp).__name__)
        if comp is not base:
            m[id(comp)] = (0, 0)
        base = comp
    top = ""
    if _multi_root:
        # two models called at the top (a GAN's netG and netD): each one's
        # modules are named from it, so that their "main (Sequential)" never merge
        top = _root_name(root)
        if -1 in m:
            m[-1] = _name_id("%s (compiled %s)" % (top, type(comp).__name__))
        top += "."
    if base is not root:
        m[id(base)] = (0, 0)
    seen = set([id(base)])
    stack = [(base, top, 1)]
    if isinstance(base, _seq_first_types) and not getattr(base, "batch_first", True):
        m[-2] = (0, 0)
    while stack:
        mod, prefix, depth = stack.pop()
        for name, child in getattr(mod, "_modules", {}).items():
            if child is None or id(child) in seen:
                continue
            seen.add(id(child))
            qual = prefix + name
            comp = _compiled_of(child)
            if comp is not None:
                # a compiled submodule: "encoder (compiled Encoder)"; the
                # module it wraps takes its place, under the same name
                m[id(child)] = (_name_id("%s (compiled %s)" % (qual, type(comp).__name__))
                                if depth <= _max_depth else 0, depth)
                if comp is not child:
                    seen.add(id(comp))
                    m[id(comp)] = (0, depth)
                child = comp
            else:
                m[id(child)] = (_name_id("%s (%s)" % (qual, type(child).__name__))
                                if depth <= _max_depth else 0, depth)
            if isinstance(child, _seq_first_types) and not getattr(child, "batch_first", True):
                m[-2] = (0, 0)  # a sequence-first model: (seq, batch) inputs
            stack.append((child, qual + ".", depth if isinstance(child, _containers)
                          else depth + 1))
    return m


def _compiled_of(mod):
    """The module a torch.compile wrapper runs, else None."""
    if _comp is None:
        return None
    return _comp.compiled_label(mod)


def _labels_of(root):
    m = _labels.get(root)
    if m is None:
        _note_root(root)
        m = _labels[root] = _build_labels(root)
    return m


_root_names = None  # WeakKeyDictionary root -> its name in labels, once there are two


def _note_root(root):
    """A model called outermost for the first time. Once there are two, or
    at the first when the frame that holds it holds another model too (a
    GAN's netG beside netD), every root's labels carry its root's name."""
    global _multi_root
    if _multi_root or root in _roots:
        return
    _roots.add(root)
    if len(_roots) < 2:
        name, scope = _find_name(root)
        if name is None or not _other_model_in(scope, root):
            return
    _multi_root = True
    for r in list(_roots):
        _root_name(r)
    _labels.clear()


def _other_model_in(scope, root):
    """Whether scope (a frame's variables) holds a model besides root that is
    not a loss and neither holds root nor is held by it."""
    mine = None
    for v in list(scope.values()):
        if v is root or not isinstance(v, _torch.nn.Module) or isinstance(v, _loss_base):
            continue
        if mine is None:
            mine = set(id(m) for m in root.modules())
        if id(v) in mine or any(m is root for m in v.modules()):
            continue  # a part of root (root.encoder), or one holding it (DDP(root))
        if any(True for _ in v.parameters()):
            return True  # a model of its own (not a parameter-free helper module)
    return False


def _root_name(root):
    n = _root_names.get(root)
    if n is None:
        n = _find_name(root)[0] or type(root).__name__
        taken = set(_root_names.values())
        base, k = n, 2
        while n in taken:
            n = "%s#%d" % (base, k)
            k += 1
        _root_names[root] = n
    return n


def _find_name(obj):
    """(name, scope): the name the script holds obj by in the outermost
    calling frame outside torch and the helper that holds it (a variable, or
    an attribute of its self), and that frame's variables; (None, None)."""
    try:
        f = sys._getframe(1)
    except (AttributeError, ValueError):
        return None, None
    found = (None, None)
    for f in _script_frames(f, 24):
        loc = f.f_locals
        for scope in (loc, f.f_globals, getattr(loc.get("self"), "__dict__", None)):
            hit = None
            if isinstance(scope, dict):
                for k, v in list(scope.items()):
                    if v is obj and isinstance(k, str) and not k.startswith("_"):
                        hit = k
                        break
            if hit is not None:
                found = (hit, scope)
                break
    return found


def _label_miss(ts, mod):
    """A module the root's map lacks: registered since (the map is rebuilt), or
    not registered under the root at all (named by its type, at its call depth)."""
    key = id(mod)
    m = ts.names
    if ts.root is not None:
        m = _labels[ts.root] = _build_labels(ts.root)
        ts.names = m
        ent = m.get(key)
        if ent is not None:
            return ent
    ent = (_name_id("(%s)" % type(mod).__name__) if ts.depth <= _max_depth else 0, ts.depth)
    m[key] = ent
    return ent


# ---- the wrappers

def _wrap_module_call(orig):
    """Module.__call__: the outermost call on a thread is a Forward phase
    (_root_enter), each call below it an operator from the root's label
    map. With _fast, its C wrapper takes the calls below the outermost and
    hands the rest to this one (slow), until torch.compile is used
    (_fast_step_aside: Dynamo traces Python wrappers, not C ones)."""
    def __call__(self, *args, **kwargs):
        global _ncalls
        if _off or (_compiling is not None and _compiling()):
            return orig(self, *args, **kwargs)
        code = 0
        try:
            ts = _tls.ts
        except AttributeError:
            ts = _ts()
        if ts.compiling:
            return orig(self, *args, **kwargs)  # the compiler running modules as it traces
        _ncalls += 1
        d = ts.depth
        try:
            if d == 0:
                code = _root_enter(ts, self, args)
            else:
                ent = ts.names.get(id(self)) if ts.names is not None else None
                if ent is None and ts.names is not None:
                    ent = _label_miss(ts, self)
                if ent is not None and ent[0]:
                    _lib.proftop_op_push_id(ent[0])
                    code = 1
        except Exception as e:  # noqa: BLE001 - the helper's own error
            _fail(e)
        ts.depth = d + 1
        try:
            return orig(self, *args, **kwargs)
        finally:
            ts.depth = d
            if code:
                try:
                    if code == 1:
                        _lib.proftop_op_pop()
                    else:
                        _root_exit(ts, code)
                except Exception as e:  # noqa: BLE001
                    _fail(e)
    slow = functools.wraps(orig)(__call__)
    if _fast_on and _compiling_seen is False:
        return _fast.module_call(orig, slow, _label_miss)
    return slow


_compiling_seen = False  # torch.compile was called: Module.__call__ is the Python wrapper


def _fast_step_aside():
    """torch.compile is used: Module.__call__ goes back to the Python wrapper
    (Dynamo inlines it; a C callable would break its graph at every module),
    for the rest of the run, so no guard sees it change again."""
    global _compiling_seen
    if _compiling_seen:
        return
    _compiling_seen = True
    nn = getattr(_torch, "nn", None)
    cur = getattr(getattr(nn, "Module", None), "__call__", None)
    slow = getattr(cur, "slow", None)
    if slow is not None and _fast is not None and type(cur).__module__ == "_proftop_fast":
        nn.Module.__call__ = slow


def _root_enter(ts, mod, args):
    """Outermost module call: the Forward phase (2), or a loss on its own (3)."""
    global _activity
    _activity = True
    _feed_disarm(ts)
    if _feed_look:
        _feed_learn()
    if isinstance(mod, _loss_base):
        _lib.proftop_phase_push(_FORWARD)
        _lib.proftop_op_push_id(_loss_label(mod))
        ts.names = None
        ts.root = None
        return 3
    _begin(ts)
    # the phase opens before the helper's own look at the model and its
    # inputs: a script's clock around the call counts that time as its
    # forward too (in a real loop, with caches cold after the last
    # operator, it was 10-20 us a call outside the phase)
    _lib.proftop_phase_push(_FORWARD)
    ts.names = names = _labels_of(mod)
    if not _batch_fixed and (_grad_enabled() or not _train):
        n, tok = _fwd_batch(names, args)
        ts.fwd_samples += n
        ts.fwd_tokens += tok
    ts.root = mod
    comp = names.get(-1)
    if comp is not None:
        _lib.proftop_op_push_id(comp)  # the compiled region
        return 4
    return 2


_loss_ids = {}


def _loss_label(mod):
    t = type(mod)
    i = _loss_ids.get(t)
    if i is None:
        i = _loss_ids[t] = _name_id("loss: %s" % t.__name__)
    return i


def _root_exit(ts, code):
    if code >= 3:
        _lib.proftop_op_pop()
    _lib.proftop_phase_pop()
    root = ts.root
    ts.names = None
    ts.root = None
    _feed_arm(ts)
    if code != 3 and not _train:
        # inference: a step per outermost forward. Without no_grad and in
        # training mode it may be the first forward of a training step (a
        # second model, the loss, then backward): a step only if a fetch
        # comes next, not another forward.
        if not _grad_enabled() or not getattr(root, "training", True):
            ts.pending = _now()
        else:
            ts.soft = _now()


def _wrap_phase(orig, phase, flag, fetch=False, train=False, samples=False):
    """The outermost call of orig on a thread is a phase that may begin a step:
    backward/grad (train: it marks a training job), a DataLoader's __next__
    or __iter__ (fetch; with samples, the batch it returns counts toward the
    step's samples). flag is
    the _TS slot that tells an inner call (a loader wrapping a loader)."""
    def wrapper(*args, **kwargs):
        if _off:
            return orig(*args, **kwargs)
        ts = _ts()
        if getattr(ts, flag) or ts.compiling:
            return orig(*args, **kwargs)
        pushed = False
        try:
            global _activity, _feed_on
            _activity = True
            _feed_disarm(ts)
            if fetch:
                _feed_on = False  # a DataLoader feeds the loop: it is timed as such
            if train:
                _set_train()
            _begin(ts, fetch=fetch)
            _lib.proftop_phase_push(phase)
            pushed = True
        except Exception as e:  # noqa: BLE001
            _fail(e)
        setattr(ts, flag, True)
        try:
            out = orig(*args, **kwargs)
        finally:
            setattr(ts, flag, False)
            if pushed:
                try:
                    _lib.proftop_phase_pop()
                    _feed_arm(ts)
                except Exception as e:  # noqa: BLE001
                    _fail(e)
                if train and not _opt_seen:
                    ts.bwd_end = True
        if samples and not _batch_fixed:
            try:
                n, tok = _loader_batch(args[0] if args else None, out)
                ts.loader_samples += n
                ts.loader_tokens += tok
            except Exception as e:  # noqa: BLE001
                _fail(e)
        return out
    return functools.wraps(orig)(wrapper)


_method_ids = {}


def _method_label(obj, meth):
    key = (type(obj), meth)
    i = _method_ids.get(key)
    if i is None:
        i = _method_ids[key] = _name_id("%s.%s" % (type(obj).__name__, meth))
    return i


def _wrap_opt_method(orig, meth, role):
    """role: 'step' (an optimizer step: ends a step), 'extra' (zero_grad,
    a scheduler: part of the step being closed, or of the next one)."""
    def method(self, *args, **kwargs):
        if _off:
            return orig(self, *args, **kwargs)
        ts = _ts()
        if ts.in_opt or ts.compiling:
            return orig(self, *args, **kwargs)  # super().step(), step() calling zero_grad()
        pushed = False
        try:
            global _activity
            _activity = True
            _feed_disarm(ts)
            if role == "step":
                _set_train()
                _saw_opt(ts)
                if ts.pending is None:
                    _begin(ts)
                pushed = True
            elif ts.start is not None or ts.pending is not None:
                pushed = True  # not before the first step (a scheduler's first step() in __init__)
            if pushed:
                _lib.proftop_phase_push(_OPTIMIZATION)
                _lib.proftop_op_push_id(_method_label(self, meth))
        except Exception as e:  # noqa: BLE001
            pushed = False
            _fail(e)
        ts.in_opt = True
        try:
            return orig(self, *args, **kwargs)
        finally:
            ts.in_opt = False
            if pushed:
                try:
                    _lib.proftop_op_pop()
                    _lib.proftop_phase_pop()
                    if role == "step" or ts.pending is not None:
                        ts.pending = _now()
                    _feed_arm(ts)
                except Exception as e:  # noqa: BLE001
                    _fail(e)
    method = functools.wraps(orig)(method)
    method._proftop_wrapped = True
    _ours.add(method)
    return method


# Our method wrappers themselves: torch's own step wrapper (the profiler's
# record_function, and on 2.x the global step hooks), put on the class by
# the first optimizer's __init__, copies their attributes (functools.wraps),
# so a marker attribute cannot tell whether ours is the outermost.
_ours = set()


def _wrap_class_methods(cls, names, role):
    for meth in names:
        # wrapped in the class that defines it, the first in the MRO
        owner = next((c for c in cls.__mro__ if meth in vars(c)), object)
        f = vars(owner).get(meth) if owner is not object else None
        if f is None or not callable(f) or f in _ours:
            continue
        # torch's step wrapper around ours (made by the first optimizer's
        # __init__): ours goes around it again, so that the Optimization
        # phase holds all the time the call takes (the profiler's
        # record_function cost 40-80 us a step outside it); the inner one
        # passes straight through (in_opt)
        try:
            setattr(owner, meth, _wrap_opt_method(f, meth, role))
        except (TypeError, AttributeError):
            pass


# ---- torch 2.x's global optimizer step hooks: the steps the wrapper misses
#
# An LR scheduler made before the helper was injected has replaced its
# optimizer's step on the instance with a function that calls the class's
# step as it was then, unwrapped: the wrapper never runs. torch 2.x calls its
# global step hooks inside every Optimizer.step, so they see those steps; a
# step the wrapper already marks (ts.in_opt) is left to it, and so is one an
# optimizer's step makes inside its own (a wrapping optimizer). A step that
# raises runs no post hook: its phase is closed when that optimizer steps again.

def _opt_pre_hook(opt, args, kwargs):
    if _off:
        return None
    try:
        ts = _ts()
        if ts.in_opt or ts.compiling:
            return None
        if ts.hooked is not None:
            if ts.hooked is not opt:
                return None  # an optimizer stepping inside another's step
            _hook_close(ts)  # its last step raised
        global _activity
        _activity = True
        _feed_disarm(ts)
        _set_train()
        _saw_opt(ts)
        if ts.pending is None:
            _begin(ts)
        _lib.proftop_phase_push(_OPTIMIZATION)
        _lib.proftop_op_push_id(_method_label(opt, "step"))
        ts.hooked = opt
    except Exception as e:  # noqa: BLE001
        _fail(e)
    return None


def _hook_close(ts):
    ts.hooked = None
    _lib.proftop_op_pop()
    _lib.proftop_phase_pop()
    ts.pending = _now()
    _feed_arm(ts)


def _opt_post_hook(opt, args, kwargs):
    if _off:
        return
    try:
        ts = _ts()
        if ts.hooked is opt and not ts.in_opt:
            _hook_close(ts)
    except Exception as e:  # noqa: BLE001
        _fail(e)


def _install_opt_hooks(torch):
    """The global step hooks, where torch has them (2.0 and later)."""
    mod = sys.modules.get(getattr(torch.optim.Optimizer, "__module__", ""))
    pre = getattr(mod, "register_optimizer_step_pre_hook", None)
    post = getattr(mod, "register_optimizer_step_post_hook", None)
    if pre is None or post is None:
        return False
    pre(_opt_pre_hook)
    post(_opt_post_hook)
    return True


def _wrap_instance_steps(torch):
    """Without the global hooks (torch 1.x): the optimizers alive now whose
    step an LR scheduler replaced on the instance get the wrapper there (one
    look over the garbage collector's objects, at the attach)."""
    import gc
    opt_cls = torch.optim.Optimizer
    n = 0
    for o in gc.get_objects():
        try:
            if not isinstance(o, opt_cls):
                continue
            f = vars(o).get("step")
            if f is None or getattr(f, "_proftop_wrapped", False):
                continue
            w = _wrap_opt_method(lambda self, *a, _f=f, **k: _f(*a, **k), "step", "step")

            def step(*a, _w=w, _o=o, **k):
                return _w(_o, *a, **k)
            for attr in ("_with_counter", "_wrapped_by_lr_sched", "__wrapped__"):
                if hasattr(f, attr):  # what the schedulers look for on it
                    setattr(step, attr, getattr(f, attr))
            step._proftop_wrapped = True
            o.step = step
            n += 1
        except Exception as e:  # noqa: BLE001
            _fail(e)
    return n


def _wrap_opt_init(orig):
    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        try:
            _wrap_class_methods(type(self), ("step",), "step")
            _wrap_class_methods(type(self), ("zero_grad",), "extra")
        except Exception as e:  # noqa: BLE001
            _fail(e)
    return functools.wraps(orig)(__init__)


# ---- an attached job: quiet while nobody reads

_QUIET_NS = 5 * 1000000000
_reader_seen_ns = 0


def _check_reader():
    """Once a step: after 5 s without a reader the hooks pass straight through,
    and a 1 Hz watcher turns them back on when a reader attaches again."""
    global _off, _reader_seen_ns, _dp_on
    now = _now()
    if _lib.proftop_reader_attached():
        _reader_seen_ns = now
        return
    if _reader_seen_ns == 0:
        _reader_seen_ns = now
    if now - _reader_seen_ns < _QUIET_NS:
        return
    _off = True
    _dp_on = False
    _lib.proftop_mark(b"proftop: no reader for 5 s: the zero-code helper went quiet")
    t = threading.Thread(target=_watch_reader, name="proftop-watch", daemon=True)
    t.start()


def _watch_reader():
    global _off, _reader_seen_ns, _dp_on
    import time
    while _off and _installed and not _stood_down:
        time.sleep(1.0)
        try:
            if _lib.proftop_reader_attached():
                with _lock:
                    for ts in list(_all_ts):
                        ts.pending = ts.soft = ts.start = None
                        ts.held = []
                        ts.fetches = 0
                        ts.partial = True  # steps restart at a boundary
                        _set_counts(ts, (0, 0, 0, 0))
                _reader_seen_ns = _now()
                _off = False
                _dp_on = True
                return
        except Exception:  # noqa: BLE001
            return


# ---- the data pipeline: the loader's queue and the stages of making a batch
#
# Stages are user ranges named "data: ..." (proftop's Data Pipeline): the
# fetch of one batch ("data: batch"), the dataset's __getitem__ by its class
# ("data: ImageFolder.__getitem__"), each transform of a torchvision
# Compose by its class ("data: RandomResizedCrop"), the collate_fn and
# pin_memory. The names are interned in the main process when the loader's
# iterator starts, before its workers fork, so every worker shares them. A
# forked worker records into the main process's session on a ring of its
# own (proftop_worker_attach), as the lane "data worker N", and gives it
# back when its loop ends. The queue: at each __next__ of a multi-worker
# iterator, the batches already received (its data queue's size plus those
# that arrived out of order) go out as the counter "Dataloader queue", and
# once per iterator its capacity (num_workers x prefetch_factor).

_dp_on = False        # data hooks record (the main process, or an attached worker)
_forked = False       # this process is a fork of the one the helper was installed in
_dp_ids = {}          # stage text -> name id
_dp_cls_ids = {}      # dataset class -> its __getitem__ stage id
_dp_tf_ids = {}       # transform class (or function name) -> stage id
_dp_patched = set()   # classes whose methods are wrapped
_dp_tls = threading.local()


def _stage_id(text):
    i = _dp_ids.get(text)
    if i is None:
        i = _dp_ids[text] = _lib.proftop_name(("data: " + text).encode("utf-8", "replace"))
    return i


def _getitem_id(obj):
    cls = type(obj)
    i = _dp_cls_ids.get(cls)
    if i is None:
        i = _dp_cls_ids[cls] = _stage_id(cls.__name__ + ".__getitem__")
    return i


def _tf_id(t):
    key = type(t)
    if key.__name__ == "function":
        key = getattr(t, "__name__", "transform")
    i = _dp_tf_ids.get(key)
    if i is None:
        i = _dp_tf_ids[key] = _stage_id(key if isinstance(key, str) else key.__name__)
    return i


def _wrap_getitem(orig):
    def __getitem__(self, idx):
        global _ncalls
        if not _dp_on:
            return orig(self, idx)
        _ncalls += 1
        try:
            _lib.proftop_range_push_id(_getitem_id(self))
        except Exception as e:  # noqa: BLE001
            _fail(e)
            return orig(self, idx)
        try:
            return orig(self, idx)
        finally:
            _lib.proftop_range_pop()
    slow = functools.wraps(orig)(__getitem__)
    if _fast_on:
        return _fast.timed(orig, slow, _dp_cls_ids)  # the class's id there, else slow names it
    return slow


def _wrap_compose_call(orig):
    """torchvision's Compose (transforms v1) calls each transform in turn:
    the same loop, each call a stage named by the transform's class."""
    def __call__(self, img):
        global _ncalls
        tfs = getattr(self, "transforms", None)
        if not _dp_on or type(tfs) is not list:
            return orig(self, img)
        _ncalls += 1
        for t in tfs:
            try:
                _lib.proftop_range_push_id(_tf_id(t))
            except Exception as e:  # noqa: BLE001
                _fail(e)
                img = t(img)
                continue
            try:
                img = t(img)
            finally:
                _lib.proftop_range_pop()
        return img
    slow = functools.wraps(orig)(__call__)
    if _fast_on:
        return _fast.compose(orig, slow, _dp_tf_ids, _tf_id)
    return slow


def _timed(fn, sid):
    def stage(*args, **kwargs):
        if not _dp_on:
            return fn(*args, **kwargs)
        _lib.proftop_range_push_id(sid)
        try:
            return fn(*args, **kwargs)
        finally:
            _lib.proftop_range_pop()
    return stage


def _wrap_fetch(orig):
    """A fetcher's fetch() makes one batch: the stage "batch"; on its first
    call the fetcher's collate_fn is timed too (on this instance only)."""
    def fetch(self, possibly_batched_index):
        if not _dp_on:
            return orig(self, possibly_batched_index)
        try:
            if not getattr(self, "_proftop_timed", False):
                self._proftop_timed = True
                cf = getattr(self, "collate_fn", None)
                if cf is not None:
                    self.collate_fn = _timed(cf, _stage_id("collate_fn"))
            _lib.proftop_range_push_id(_stage_id("batch"))
        except Exception as e:  # noqa: BLE001
            _fail(e)
            return orig(self, possibly_batched_index)
        try:
            return orig(self, possibly_batched_index)
        finally:
            _lib.proftop_range_pop()
    return functools.wraps(orig)(fetch)


def _wrap_pin(orig):
    """pin_memory() recurses into containers: only the outermost call is a stage."""
    def pin_memory(data, *args, **kwargs):
        if not _dp_on or getattr(_dp_tls, "pinning", False):
            return orig(data, *args, **kwargs)
        _dp_tls.pinning = True
        try:
            _lib.proftop_range_push_id(_stage_id("pin_memory"))
        except Exception as e:  # noqa: BLE001
            _dp_tls.pinning = False
            _fail(e)
            return orig(data, *args, **kwargs)
        try:
            return orig(data, *args, **kwargs)
        finally:
            _lib.proftop_range_pop()
            _dp_tls.pinning = False
    return functools.wraps(orig)(pin_memory)


def _patch_class(cls, meth, wrap):
    """Wraps meth where cls's MRO defines it (once per defining class)."""
    for k in cls.__mro__:
        if meth in vars(k):
            if k.__module__ == "builtins" or (k, meth) in _dp_patched:
                return
            _dp_patched.add((k, meth))
            setattr(k, meth, wrap(vars(k)[meth]))
            return


def _dp_prepare(loader):
    """When a loader's iterator starts (before its workers fork): wraps its
    dataset classes' __getitem__ and torchvision's Compose, interns the
    stage names."""
    _dp_prepare_ds(getattr(loader, "dataset", None))


def _dp_prepare_ds(ds):
    seen = 0
    while ds is not None and seen < 4:
        seen += 1
        if hasattr(type(ds), "__getitem__") and not isinstance(ds, (list, tuple, dict)):
            _patch_class(type(ds), "__getitem__", _wrap_getitem)
            _getitem_id(ds)
        for attr in ("transform", "transforms", "target_transform"):
            tf = getattr(ds, attr, None)
            comp = type(tf)
            if comp.__name__ == "Compose" and comp.__module__.startswith("torchvision.transforms") \
                    and "__call__" in vars(comp):
                _patch_class(comp, "__call__", _wrap_compose_call)
                for t in getattr(tf, "transforms", None) or ():
                    _tf_id(t)
        ds = getattr(ds, "dataset", None)
    for text in ("batch", "collate_fn", "pin_memory"):
        _stage_id(text)


def _queue_ready(it):
    """The batches ready when the training asks (multi-worker iterators: its
    data queue's size plus those that arrived out of order), None without
    workers."""
    if getattr(it, "_tasks_outstanding", None) is None:
        return None  # no workers: no queue
    ready = 0
    info = getattr(it, "_task_info", None)
    if isinstance(info, dict):
        for v in info.values():
            if isinstance(v, tuple) and len(v) == 2:
                ready += 1  # arrived out of order, kept for later
    q = getattr(it, "_data_queue", None)
    if q is not None:
        try:
            ready += int(q.qsize())
        except Exception:  # noqa: BLE001 - not every platform has qsize
            return None
    return ready


def _queue_emit(it, ready):
    """The queue as the fetch found it: 0 when the fetch waited for its batch
    (its queue was empty when the iterator asked for more: _wrap_try_get),
    whatever else had arrived out of order; else the batches that were ready."""
    if not getattr(it, "_proftop_cap", False):
        it._proftop_cap = True
        cap = (getattr(it, "_num_workers", 0) or 0) * (getattr(it, "_prefetch_factor", 0) or 0)
        if cap > 0:
            _lib.proftop_counter(b"Dataloader queue capacity", float(cap))
    v = 0 if getattr(it, "_proftop_waited", False) else max(ready, 1)
    _lib.proftop_counter(b"Dataloader queue", float(v))


def _wrap_next(inner):
    def __next__(self):
        ready = None
        if _dp_on:
            try:
                ready = _queue_ready(self)
                if ready is not None:
                    self._proftop_waited = False
            except Exception as e:  # noqa: BLE001
                _fail(e)
        if ready is None:
            return inner(self)
        try:
            return inner(self)
        finally:
            try:
                _queue_emit(self, ready)
            except Exception as e:  # noqa: BLE001
                _fail(e)
    return functools.wraps(inner)(__next__)


def _wrap_try_get(orig):
    """A multi-worker iterator asks its data queue for a batch: with nothing
    in it, the training waits (the batch it needs next is not there)."""
    def _try_get_data(self, *args, **kwargs):
        if _dp_on and getattr(self, "_proftop_waited", None) is False:
            try:
                if self._data_queue.qsize() == 0:
                    self._proftop_waited = True
            except Exception:  # noqa: BLE001 - no qsize: the figure stays as counted
                pass
        return orig(self, *args, **kwargs)
    return functools.wraps(orig)(_try_get_data)


def _wrap_iter(inner):
    def __iter__(self):
        if _dp_on:
            try:
                _dp_prepare(self)
            except Exception as e:  # noqa: BLE001
                _fail(e)
        it = inner(self)
        try:
            it._proftop_bs = getattr(self, "batch_size", None)  # for _loader_batch
            it._proftop_dim = None
        except Exception:  # noqa: BLE001 - an iterator that takes no attributes
            pass
        return it
    return functools.wraps(inner)(__iter__)


def _wrap_worker_loop(orig):
    """A DataLoader worker's loop, in the worker: it records its stages into
    the main process's session as the lane "data worker N" (a forked worker
    through the session it shares, a spawn or forkserver one by the main
    process's pid)."""
    def _worker_loop(*args, **kwargs):
        attached = False
        try:
            wid = kwargs.get("worker_id", args[10] if len(args) > 10 else None)
            attached = _worker_attach(wid)
        except Exception:  # noqa: BLE001
            attached = False
        if attached and not _forked:
            # a new interpreter: the dataset's classes arrived unwrapped. The
            # dataset is the second argument, in a one-item list on torch 2.x
            # (the loop pops it)
            try:
                ds = kwargs.get("dataset", kwargs.get("dataset_holder",
                                                      args[1] if len(args) > 1 else None))
                if type(ds) is list:
                    ds = ds[-1] if ds else None
                _dp_prepare_ds(ds)
            except Exception as e:  # noqa: BLE001
                _fail(e)
        try:
            return orig(*args, **kwargs)
        finally:
            if attached:
                _worker_detach()
    return functools.wraps(orig)(_worker_loop)


def _worker_attach(wid):
    global _dp_on
    if _lib is None:
        return False
    label = ("data worker" if not isinstance(wid, int) else "data worker %d" % wid).encode()[:15]
    if _forked:
        f = getattr(_lib, "proftop_worker_attach", None)
        if f is None or f(label) != 1:
            return False
    else:
        # spawn / forkserver: the process that made the loader is the parent
        # multiprocessing names (a forkserver's child's OS parent is the server)
        f = getattr(_lib, "proftop_worker_attach_pid", None)
        mp = sys.modules.get("multiprocessing")
        parent = mp.parent_process() if mp is not None else None
        if f is None or parent is None or not parent.pid or f(int(parent.pid), label) != 1:
            return False
        _dp_ids.clear()  # interned (if at all) in this process's own session
        _dp_cls_ids.clear()
        _dp_tf_ids.clear()
    _dp_on = True
    return True


def _worker_detach():
    global _dp_on
    _dp_on = False
    try:
        _lib.proftop_worker_detach()
    except Exception:  # noqa: BLE001
        pass


def _install_data(torch):
    data = torch.utils.data
    utils = getattr(data, "_utils", None)
    fetch = getattr(utils, "fetch", None)
    for name in ("_MapDatasetFetcher", "_IterableDatasetFetcher"):
        cls = getattr(fetch, name, None)
        if isinstance(cls, type) and "fetch" in vars(cls):
            cls.fetch = _wrap_fetch(cls.fetch)
    pin = getattr(utils, "pin_memory", None)
    if pin is not None and callable(getattr(pin, "pin_memory", None)):
        pin.pin_memory = _wrap_pin(pin.pin_memory)
    mp_it = getattr(getattr(data, "dataloader", None), "_MultiProcessingDataLoaderIter", None)
    if isinstance(mp_it, type) and "_try_get_data" in vars(mp_it):
        mp_it._try_get_data = _wrap_try_get(mp_it._try_get_data)
    worker = getattr(utils, "worker", None)
    if worker is not None and callable(getattr(worker, "_worker_loop", None)):
        worker._worker_loop = _wrap_worker_loop(worker._worker_loop)


# ---- install, stand down, exit

def _env_int(name, default):
    try:
        v = int(os.environ.get(name, ""))
        return v if v >= 0 else default
    except ValueError:
        return default


def _is_launcher():
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", "") or ""
    argv0 = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name.startswith("torch.distributed.") or argv0 in ("torchrun", "torchx")


def _is_worker():
    """A DataLoader (or other multiprocessing) child: records nothing."""
    mp = sys.modules.get("multiprocessing")
    try:
        if mp is not None and mp.parent_process() is not None:
            return True
    except Exception:  # noqa: BLE001 - Python < 3.8
        pass
    argv = list(getattr(sys, "orig_argv", None) or sys.argv or [])
    return "--multiprocessing-fork" in argv or \
        any("from multiprocessing." in a for a in argv if isinstance(a, str))


def _after_fork_child():
    global _off, _dp_on, _forked
    _off = True  # the probe records nothing in a forked child either
    _dp_on = False  # unless it is a DataLoader worker that attaches (_worker_loop)
    _forked = True


def _at_exit():
    """Closes this thread's last step; says why there were none."""
    global _off, _dp_on
    if _off and not _installed:
        return
    try:
        ts = getattr(_tls, "ts", None)
        if not _off and ts is not None:
            if ts.pending is None:
                ts.pending = ts.soft
            if ts.pending is None and ts.held:
                ts.pending = ts.held[-1][0]  # the work after the last optimizer step: not a step
            ts.held = []
            _feed_disarm(ts)
            if not _opt_seen:
                _bwd_flush(ts)
            if ts.pending is None and ts.bwd_end and not _opt_seen:
                ts.pending = _now()
            if ts.pending is not None:
                _emit_step(ts)
        if _steps == 0 and not _is_launcher() and _lib is not None and _installed:
            if _activity:
                text = ("proftop: no steps: the model ran, but no step ended (no optimizer "
                        "step or backward; forward passes with gradients and no DataLoader "
                        "fetch between them)")
            else:
                text = ("proftop: no steps: torch %s was imported, but no model forward, "
                        "backward or optimizer step ran (no training loop seen)"
                        % _torch.__version__)
            _lib.proftop_mark(text.encode())
        if _errors > 1:
            _lib.proftop_mark(("proftop: the Python helper caught %d errors of its own"
                               % _errors).encode())
        if _ctl is not None:
            _ctl.at_exit()
        if _helper_stats is not None:
            _helper_stats(_helper_calls(), _cost_ps)
    except Exception:  # noqa: BLE001
        pass
    _off = True
    _dp_on = False


def _torch_ops(torch):
    """PROFTOP_TORCH_OPS=1: aten operators through emit_nvtx on CUDA builds."""
    if getattr(torch.version, "cuda", None) is None:
        _lib.proftop_mark(("proftop: --torch-ops: aten operators are not available: torch %s "
                           "was built without CUDA, and its NVTX emission needs CUDA; modules, "
                           "phases and steps are shown" % torch.__version__).encode())
        return None
    try:
        ctx = torch.autograd.profiler.emit_nvtx(record_shapes=False)
        ctx.__enter__()
        _lib.proftop_mark(b"proftop: --torch-ops: aten operators through torch's NVTX emission "
                          b"(main thread)")
        return ctx
    except Exception as e:  # noqa: BLE001
        _lib.proftop_mark(("proftop: --torch-ops: torch's NVTX emission failed: %s" % e)[:400]
                          .encode("utf-8", "replace"))
        return None


ATTACH_NO_STEP_S = 30.0  # PROFTOP_ATTACH_NO_STEP_S overrides (tests)


def _attach_watch():
    """After an attach: when no step was found in ATTACH_NO_STEP_S, say why
    on the screen and in the report (a note), once."""
    try:
        wait = float(os.environ.get("PROFTOP_ATTACH_NO_STEP_S", ATTACH_NO_STEP_S))
    except ValueError:
        wait = ATTACH_NO_STEP_S

    def check():
        if _steps or _off or _lib is None:
            return
        if _activity:
            text = ("proftop: no steps %.0f s after the attach: the model ran, but no step "
                    "ended (no optimizer step or backward; forward passes with gradients "
                    "and no DataLoader fetch between them)" % wait)
        else:
            text = ("proftop: no steps %.0f s after the attach: no model forward, backward "
                    "or optimizer step ran since (between epochs, evaluating, or stuck?)"
                    % wait)
        try:
            _lib.proftop_mark(text.encode())
        except Exception:  # noqa: BLE001
            pass
    try:
        import threading
        t = threading.Timer(wait, check)
        t.daemon = True
        t.start()
    except Exception as e:  # noqa: BLE001
        _fail(e)


def _control_setup(lib, torch):
    """The capture module when the probe has the control word (else None)."""
    if not hasattr(lib, "proftop_control"):
        return None
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        if here not in sys.path:
            sys.path.append(here)
        import proftop_capture
        return proftop_capture if proftop_capture.setup(lib, torch) else None
    except Exception as e:  # noqa: BLE001
        _fail(e)
        return None


def _compile_setup(lib, torch):
    """proftop_compile when torch has torch.compile (2.x), else None."""
    if getattr(torch, "compile", None) is None:
        return None
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        if here not in sys.path:
            sys.path.append(here)
        import proftop_compile
        ok = proftop_compile.setup(lib, torch, _fail, _ts, _fast_step_aside)
        return proftop_compile if ok else None
    except Exception as e:  # noqa: BLE001
        _fail(e)
        return None


_nvtx_ctx = None
_helper_stats = None   # proftop_helper_stats, when the probe has it
_cost_ps = 0           # what one wrapped call adds besides its events (_calibrate), ps
_calls_base = 0        # the calls _calibrate made


def _helper_calls():
    """Wrapped calls so far (C and Python wrappers), the calibration's aside."""
    n = _ncalls + (_fast.calls() if _fast_on else 0)
    return n - _calls_base if n > _calls_base else 0


def _calibrate(torch, rounds=15, n=200):
    """ps one module call below the outermost adds through the wrapper now in
    place (the C one or the Python one), besides the events it records
    (the probe measures those): a parameter-free module called n times as a
    call past the depth (no record), and the same call to the function the
    wrapper wraps, alternately, rounds times; the fastest round of each (a
    round another process interrupted is only slower). About 2 ms, once,
    at install; nothing is recorded and the thread's state is put back."""
    global _calls_base
    import time
    pc = time.perf_counter_ns
    m = torch.nn.Identity()
    bare = getattr(torch.nn.Module.__call__, "__wrapped__", None)
    if bare is None:
        return 0
    ts = _ts()
    saved = (ts.depth, ts.names)
    ts.depth, ts.names = 1, {id(m): (0, 1)}
    fb = fw = None
    try:
        for _ in range(rounds):
            t0 = pc()
            for _ in range(n):
                bare(m, 0)
            t1 = pc()
            for _ in range(n):
                m(0)
            t2 = pc()
            fb = t1 - t0 if fb is None else min(fb, t1 - t0)
            fw = t2 - t1 if fw is None else min(fw, t2 - t1)
    finally:
        ts.depth, ts.names = saved
        _calls_base = _ncalls + (_fast.calls() if _fast_on else 0)
    return max(int((fw - fb) * 1000 // n), 1)


_HOT = ("proftop_op_push_id", "proftop_op_pop", "proftop_range_push_id", "proftop_range_pop",
        "proftop_phase_push", "proftop_phase_pop", "proftop_now")


class _HotLib(object):
    """The ctypes library with its seven hottest entry points (_HOT) called
    through _fast (a C call, not a ctypes one: ~20x cheaper); every other
    name is the library's own."""
    def __init__(self, lib):
        self._ctypes = lib
        for n in _HOT:
            setattr(self, n, getattr(_fast, n))

    def __getattr__(self, name):
        v = getattr(self._ctypes, name)
        setattr(self, name, v)
        return v


def _fast_setup(lib):
    """_fast's wrappers from now on, when it loaded and the probe has the
    entry points it calls (their addresses, from this ctypes library);
    returns the library the helper calls (_HotLib then, else lib)."""
    global _fast_on
    if _fast is None:
        return lib
    try:
        if not _fast_on:
            addr = tuple(ctypes.cast(getattr(lib, n), ctypes.c_void_p).value for n in _HOT)
            _fast.setup(globals(), addr, types.FunctionType)
            _fast_on = True
        return _HotLib(lib)
    except Exception as e:  # noqa: BLE001 - the Python wrappers, then
        _fail(e)
        return lib


def install(torch, attach=False):
    """Installs the hooks into torch (once); returns a one-line status."""
    global _off, _lib, _max_depth, _batch_fixed, _compiling, _grad_enabled, _loss_base
    global _wrapper_roots, _labels, _torch, _installed, _attach, _nvtx_ctx, _all_ts, _containers
    global _ctl, _comp, _root_names, _roots, _seq_first_types, _step_tokens, _torch_dir
    global _dp_on, _compiling_seen, _helper_stats, _cost_ps
    if _installed:
        return status()
    if os.environ.get("PROFTOP_TORCH", "1") == "0":
        return "off (PROFTOP_TORCH=0)"
    worker = _is_worker()
    if not proftop.enabled():
        proftop.load()
    lib = proftop.lib()
    if worker:
        # a multiprocessing child marks no steps; a DataLoader worker started
        # with spawn or forkserver records its data stages (_wrap_worker_loop)
        if lib is not None and hasattr(lib, "proftop_worker_attach_pid"):
            _lib = _fast_setup(lib)
            _torch = torch
            _install_data(torch)
            _installed = True
            return "data stages only (a multiprocessing child)"
        return "off (a multiprocessing child)"
    if lib is None or not hasattr(lib, "proftop_step_span") or not hasattr(lib, "proftop_now"):
        return "off (libproftop.so is not loaded, or too old)"
    pt = sys.modules.get("proftop_torch")
    if pt is not None and getattr(pt, "_active", 0) > 0:
        return "off (proftop.torch.instrument() is in use)"
    import weakref
    _all_ts = weakref.WeakSet()
    _lib = lib = _fast_setup(lib)
    _torch = torch
    _attach = attach
    _max_depth = _env_int("PROFTOP_TORCH_DEPTH", 3)
    _batch_fixed = _env_int("PROFTOP_BATCH", 0)
    _labels = weakref.WeakKeyDictionary()
    _seq_first_types = tuple(c for c in (getattr(torch.nn, n, None) for n in (
        "RNNBase", "TransformerEncoderLayer", "TransformerDecoderLayer", "Transformer",
        "MultiheadAttention")) if isinstance(c, type))
    _root_names = weakref.WeakKeyDictionary()
    _roots = weakref.WeakSet()
    _grad_enabled = torch.is_grad_enabled
    comp = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    if comp is None:
        comp = getattr(getattr(torch, "_dynamo", None), "is_compiling", None)
    _compiling = comp
    nn = torch.nn
    _loss_base = getattr(nn.modules.loss, "_Loss", ())
    roots = []
    for mod, name in (("torch.nn.parallel", "DistributedDataParallel"),
                      ("torch.nn.parallel", "DataParallel")):
        c = getattr(getattr(nn, "parallel", None), name, None)
        if isinstance(c, type):
            roots.append(c)
    _wrapper_roots = tuple(roots)
    _containers = tuple(c for c in (getattr(nn, "ModuleList", None), getattr(nn, "ModuleDict", None))
                        if isinstance(c, type))

    if "torch._dynamo" in sys.modules:
        _compiling_seen = True  # the compiler is loaded already (an attach): Python wrappers
    nn.Module.__call__ = _wrap_module_call(nn.Module.__call__)
    torch.autograd.backward = _wrap_phase(torch.autograd.backward, _BACKWARD, "in_bwd", train=True)
    torch.autograd.grad = _wrap_phase(torch.autograd.grad, _BACKWARD, "in_bwd", train=True)
    opt = torch.optim.Optimizer
    opt.__init__ = _wrap_opt_init(opt.__init__)
    # optimizer classes that exist already (an attach to a running job, a
    # subclass defined before torch finished importing): wrapped now
    todo = list(opt.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        _wrap_class_methods(cls, ("step",), "step")
        _wrap_class_methods(cls, ("zero_grad",), "extra")
    if attach:
        # optimizers made before this, whose step an LR scheduler may have
        # replaced on the instance (the wrapper cannot reach those)
        if not _install_opt_hooks(torch):
            _wrap_instance_steps(torch)
    sched = getattr(torch.optim, "lr_scheduler", None)
    if sched is not None:
        for v in list(vars(sched).values()):
            if isinstance(v, type) and "step" in vars(v) and v.__module__ == sched.__name__:
                _wrap_class_methods(v, ("step",), "extra")
    it = getattr(getattr(torch.utils.data, "dataloader", None), "_BaseDataLoaderIter", None)
    if it is not None and "__next__" in vars(it):
        it.__next__ = _wrap_next(_wrap_phase(it.__next__, _DATALOADER, "in_fetch", fetch=True,
                                             samples=True))
    dl = getattr(torch.utils.data, "DataLoader", None)
    if isinstance(dl, type) and "__iter__" in vars(dl):
        # iter(loader) starts the workers: data loading, and a step's start
        dl.__iter__ = _wrap_iter(_wrap_phase(dl.__iter__, _DATALOADER, "in_fetch", fetch=True))
    _install_data(torch)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_child)
    atexit.register(_at_exit)
    _installed = True
    _torch_dir = os.path.dirname(getattr(torch, "__file__", "") or "") or "\0"
    _off = False
    _step_tokens = getattr(lib, "proftop_step_tokens", None)
    _helper_stats = getattr(lib, "proftop_helper_stats", None)
    if _helper_stats is not None:
        try:
            _cost_ps = _calibrate(torch)
        except Exception as e:  # noqa: BLE001
            _fail(e)
    _ctl = _control_setup(lib, torch)
    _comp = _compile_setup(lib, torch)
    if attach:
        _attach_watch()
    _dp_on = True
    if os.environ.get("PROFTOP_TORCH_OPS", "") not in ("", "0"):
        _nvtx_ctx = _torch_ops(torch)
    return status()


def watch(attach=True):
    """Installs the helper when torch is imported (for an attach before that)."""
    class _Watch(object):
        busy = False

        def find_spec(self, name, path=None, target=None):
            if name != "torch" or self.busy:
                return None
            self.busy = True
            try:
                import importlib.util
                spec = importlib.util.find_spec(name)
            except Exception:  # noqa: BLE001
                spec = None
            finally:
                self.busy = False
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            loader = getattr(spec, "loader", None)
            orig = getattr(loader, "exec_module", None)
            if orig is None:
                return None

            def exec_module(module):
                orig(module)
                try:
                    install(module, attach=attach)
                except Exception:  # noqa: BLE001
                    pass
            loader.exec_module = exec_module
            return spec
    try:
        sys.meta_path.insert(0, _Watch())
        return True
    except Exception:  # noqa: BLE001
        return False


_stood_down = False


def stand_down(reason="proftop.torch.instrument() is in use"):
    """Stops marking (the script instruments itself); ranges open now still close."""
    global _off, _stood_down, _dp_on
    if _stood_down or not _installed:
        return
    _stood_down = True
    _off = True
    _dp_on = False
    with _lock:
        for ts in list(_all_ts):
            ts.pending = ts.soft = ts.start = None
            ts.held = []
            ts.fetches = 0
    try:
        _lib.proftop_mark(("proftop: the zero-code helper stood down: %s" % reason).encode())
    except Exception:  # noqa: BLE001
        pass


def status():
    if not _installed:
        return "not installed"
    return "%s (torch %s, depth %d%s)" % ("off" if _off else "on", _torch.__version__,
                                         _max_depth,
                                         ", batch %d" % _batch_fixed if _batch_fixed else "")
