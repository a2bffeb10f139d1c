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
_dp_on = False        # data hooks record (the main process, or an attached worker)


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
# the fields _fast.TSBase holds, where C reads them
_TS_C = ("depth", "names", "compiling", "root", "start", "pending", "bwd_end", "gen_open",
         "in_bwd", "in_opt", "in_fetch", "soft", "held", "partial", "fwd_samples", "fwd_tokens",
         "loader_samples", "loader_tokens", "fetches")


class _TS(_fast.TSBase if _fast is not None else object):
    """One thread's state: module depth, open ranges, the step being built."""
    __slots__ = (() if _fast is not None else _TS_C) + ("hooked", "bwd_marks", "__weakref__")

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
            _st._feed_close(self)
            if not _opt_seen and not _off:
                _st._bwd_flush(self)
            if self.pending is None and self.bwd_end and not _opt_seen:
                self.pending = _now()
            if self.pending is not None and not _off:
                _st._emit_step(self)
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


# ---- the parts: proftop_steps, proftop_phases, proftop_data

# from this file's directory, as the capture and compile parts are imported
if _here not in sys.path:
    sys.path.append(_here)
import proftop_data as _dp  # noqa: E402
import proftop_phases as _ph  # noqa: E402
import proftop_steps as _st  # noqa: E402

for _part in (_st, _ph, _dp):
    _part._a, _part._st, _part._ph, _part._dp = sys.modules[__name__], _st, _ph, _dp
del _part


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
                        _st._set_counts(ts, (0, 0, 0, 0))
                _reader_seen_ns = _now()
                _off = False
                _dp_on = True
                return
        except Exception:  # noqa: BLE001
            return


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
    global _off, _dp_on
    _off = True  # the probe records nothing in a forked child either
    _dp_on = False  # unless it is a DataLoader worker that attaches (_worker_loop)
    _dp._forked = True


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
            _st._feed_disarm(ts)
            if not _opt_seen:
                _st._bwd_flush(ts)
            if ts.pending is None and ts.bwd_end and not _opt_seen:
                ts.pending = _now()
            if ts.pending is not None:
                _st._emit_step(ts)
        if _steps == 0 and not _stood_down and not _is_launcher() and _lib is not None and \
                _installed:
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
        import proftop_compile
        ok = proftop_compile.setup(lib, torch, _fail, _ts, _ph._fast_step_aside)
        return proftop_compile if ok else None
    except Exception as e:  # noqa: BLE001
        _fail(e)
        return None


def _dist_setup(lib, torch):
    """proftop_dist: torch.distributed's collectives, when torch has them."""
    try:
        import proftop_dist
        return proftop_dist.setup(lib, torch, _fail, lambda: _off)
    except Exception as e:  # noqa: BLE001
        _fail(e)
        return False


_nvtx_ctx = None
_root_fast = False     # _fast takes the common case of outermost module calls, optimizer
                       # steps and backward too (_root_setup)
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
# called once a step (a step's end, the control word), where the probe has them
_STEP = ("proftop_step_span", "proftop_step_tokens", "proftop_helper_stats", "proftop_control")


class _HotLib(object):
    """The ctypes library with its seven hottest entry points (_HOT) and
    those called once a step (_STEP, where the probe has them) called
    through _fast (a C call, not a ctypes one: ~20x cheaper, and in a real
    loop, with caches cold, 1-5 us less each); every other name is the
    library's own."""
    def __init__(self, lib):
        self._ctypes = lib
        for n in _HOT:
            setattr(self, n, getattr(_fast, n))
        for n in _STEP:
            if hasattr(lib, n):
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
            more = tuple(ctypes.cast(getattr(lib, n), ctypes.c_void_p).value
                         if hasattr(lib, n) else 0 for n in _STEP)
            _fast.setup(globals(), addr, types.FunctionType)
            _fast.step_calls(more)
            _fast_on = True
        return _HotLib(lib)
    except Exception as e:  # noqa: BLE001 - the Python wrappers, then
        _fail(e)
        return lib


def install(torch, attach=False):
    """Installs the hooks into torch (once); returns a one-line status."""
    global _off, _lib, _max_depth, _batch_fixed, _compiling, _grad_enabled, _loss_base
    global _wrapper_roots, _labels, _torch, _installed, _attach, _nvtx_ctx, _all_ts, _containers
    global _ctl, _comp, _roots, _step_tokens
    global _dp_on, _helper_stats, _cost_ps, _root_fast
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
            _dp._install_data(torch)
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
    _st._seq_first_types = tuple(c for c in (getattr(torch.nn, n, None) for n in (
        "RNNBase", "TransformerEncoderLayer", "TransformerDecoderLayer", "Transformer",
        "MultiheadAttention")) if isinstance(c, type))
    _ph._root_names = weakref.WeakKeyDictionary()
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
        _ph._compiling_seen = True  # the compiler is loaded already (an attach): Python wrappers
    if _fast_on:
        _root_fast = _root_setup(torch, comp)
    nn.Module.__call__ = _ph._wrap_module_call(nn.Module.__call__)
    torch.autograd.backward = _ph._wrap_phase(torch.autograd.backward, _BACKWARD, "in_bwd",
                                              train=True)
    torch.autograd.grad = _ph._wrap_phase(torch.autograd.grad, _BACKWARD, "in_bwd", train=True)
    opt = torch.optim.Optimizer
    opt.__init__ = _ph._wrap_opt_init(opt.__init__)
    # optimizer classes that exist already (an attach to a running job, a
    # subclass defined before torch finished importing): wrapped now
    todo = list(opt.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        _ph._wrap_class_methods(cls, ("step",), "step")
        _ph._wrap_class_methods(cls, ("zero_grad",), "extra")
    if attach:
        # optimizers made before this, whose step an LR scheduler may have
        # replaced on the instance (the wrapper cannot reach those)
        if not _ph._install_opt_hooks(torch):
            _ph._wrap_instance_steps(torch)
    sched = getattr(torch.optim, "lr_scheduler", None)
    if sched is not None:
        for v in list(vars(sched).values()):
            if isinstance(v, type) and "step" in vars(v) and v.__module__ == sched.__name__:
                _ph._wrap_class_methods(v, ("step",), "extra")
    it = getattr(getattr(torch.utils.data, "dataloader", None), "_BaseDataLoaderIter", None)
    if it is not None and "__next__" in vars(it):
        orig_next = it.__next__
        it.__next__ = _dp._wrap_next(_ph._wrap_phase(orig_next, _DATALOADER, "in_fetch",
                                                     fetch=True, samples=True))
        if _root_fast:
            # the fetch's common case (no workers, the step ends at its
            # optimizer step) in C, the step's end with it
            it.__next__ = _fast.fetch_call(orig_next, it.__next__, None)
    dl = getattr(torch.utils.data, "DataLoader", None)
    if isinstance(dl, type) and "__iter__" in vars(dl):
        # iter(loader) starts the workers: data loading, and a step's start
        dl.__iter__ = _dp._wrap_iter(_ph._wrap_phase(dl.__iter__, _DATALOADER, "in_fetch",
                                                     fetch=True))
    _dp._install_data(torch)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_child)
    atexit.register(_at_exit)
    _installed = True
    _st._torch_dir = os.path.dirname(getattr(torch, "__file__", "") or "") or "\0"
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
    _dist_setup(lib, torch)
    if attach:
        _attach_watch()
    _dp_on = True
    if os.environ.get("PROFTOP_TORCH_OPS", "") not in ("", "0"):
        _nvtx_ctx = _torch_ops(torch)
    return status()


def _root_setup(torch, comp):
    """The outermost module call's common case in C too (_fast.root_setup),
    where it can tell as the Python wrapper does that nothing compiles: no
    torch.compile (1.x), or torch.compiler.is_compiling reading
    torch.compiler's flag."""
    cm = getattr(torch, "compiler", None)
    flags = vars(cm) if cm is not None and "_is_compiling_flag" in vars(cm) else None
    if comp is not None and (flags is None or comp is not getattr(cm, "is_compiling", None)):
        return False
    try:
        _fast.root_setup(vars(_st), vars(_ph), flags, torch.Tensor)
        return True
    except Exception as e:  # noqa: BLE001 - the Python wrapper takes them all, then
        _fail(e)
        return False


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
