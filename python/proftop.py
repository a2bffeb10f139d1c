"""proftop.py - annotate a Python training job for proftop (ctypes, no build step).

Copy this one file next to your script (or put proftop's python/ directory on
PYTHONPATH) and mark what proftop should show::

    import proftop
    for batch in loader:
        with proftop.phase("forward"):
            loss = model(batch)
        ...
        proftop.step(len(batch))          # one training step, with its samples

or, for a PyTorch loop, without editing it::

    proftop.torch.instrument(model, optimizer, loader)

The calls go to libproftop.so (proftop's probe) when it is already loaded in
this process - `proftop run` / `proftop record` preload it - or when
PROFTOP_LIB names it. Otherwise every call is a cheap no-op and
proftop.enabled() is False, so annotated code runs unchanged without proftop.
PROFTOP_DISABLE=1 turns everything off.

Threading: every function may be called from any thread; ranges and phases
nest per thread (a pop closes the innermost open range of the calling thread).
"""

import ctypes
import os
import sys
import threading

# range and torch are left out on purpose: `from proftop import *` must not
# shadow the builtin range() or the torch package. Use proftop.range / proftop.torch.
__all__ = [
    "enabled", "step", "step_begin", "phase", "op",
    "phase_push", "phase_pop", "range_push", "range_pop", "op_push", "op_pop",
    "name_id", "mark", "counter", "load",
]

ABI_VERSION = 1
LIB_NAME = "libproftop.so"

# enum proftop_phase in include/proftop/proftop.h
PHASES = {
    "dataloader": 1, "reader": 1, "data": 1,
    "forward": 2,
    "backward": 3,
    "optimization": 4, "optimizer": 4, "optim": 4,
}

_lib = None           # the ctypes library, when loaded and ABI-compatible
_on = False           # the library is loaded (calls go through)
_names = {}           # name -> interned id (proftop_name), filled lazily
_names_lock = threading.Lock()


def _bind(lib):
    """Declares the prototypes; returns False when a symbol is missing."""
    u32, u64, vp, cp, dbl = (ctypes.c_uint32, ctypes.c_uint64, None,
                             ctypes.c_char_p, ctypes.c_double)
    protos = {
        "proftop_abi_version": (ctypes.c_int, []),
        "proftop_enabled": (ctypes.c_int, []),
        "proftop_step": (vp, [u64]),
        "proftop_step_begin": (vp, []),
        "proftop_phase_push": (vp, [ctypes.c_int]),
        "proftop_phase_pop": (vp, []),
        "proftop_op_push": (vp, [cp]),
        "proftop_op_pop": (vp, []),
        "proftop_range_push": (vp, [cp]),
        "proftop_range_pop": (vp, []),
        "proftop_name": (u32, [cp]),
        "proftop_op_push_id": (vp, [u32]),
        "proftop_range_push_id": (vp, [u32]),
        "proftop_mark": (vp, [cp]),
        "proftop_counter": (vp, [cp, dbl]),
    }
    # newer entry points: bound when the library has them (steps with explicit
    # bounds, the session clock, whether a reader is attached)
    optional = {
        "proftop_step_span": (vp, [u64, u64, u64]),
        "proftop_step_tokens": (vp, [u64]),
        "proftop_helper_stats": (vp, [u64, u64]),
        "proftop_now": (u64, []),
        "proftop_reader_attached": (ctypes.c_int, []),
        # the control word: deep capture on demand (proftop_capture.py)
        "proftop_control": (u64, []),
        "proftop_control_at_step": (u64, []),
        "proftop_control_caps": (vp, [u32]),
        "proftop_control_answer": (vp, [u32, u32, u32, cp]),
        "proftop_capture_report": (vp, [u64] * 7 + [ctypes.c_int32, u32]),
        "proftop_capture_path": (ctypes.c_int, [u32, ctypes.c_char_p, u32]),
        "proftop_gpu_collector": (ctypes.c_int, []),
        "proftop_worker_attach": (ctypes.c_int, [cp]),
        "proftop_worker_attach_pid": (ctypes.c_int, [ctypes.c_int32, cp]),
        "proftop_worker_detach": (vp, []),
        # collectives (proftop_dist.py)
        "proftop_coll_enter": (vp, [u32, u32, u64, u64, u32, u32]),
        "proftop_coll_done": (vp, [u32, u32, u64, u64, u64, u32, u32]),
    }
    try:
        for sym, (res, args) in protos.items():
            f = getattr(lib, sym)
            f.restype = res
            f.argtypes = args
    except AttributeError:
        return False
    for sym, (res, args) in optional.items():
        f = getattr(lib, sym, None)
        if f is not None:
            f.restype = res
            f.argtypes = args
    return True


def _open():
    """The probe if it is loaded (or PROFTOP_LIB names it), else None."""
    if os.environ.get("PROFTOP_DISABLE", "") not in ("", "0"):
        return None
    lib = None
    noload = getattr(os, "RTLD_NOLOAD", 4)
    try:
        # Only a library already in the process: preloaded by `proftop run`.
        lib = ctypes.CDLL(LIB_NAME, mode=noload | ctypes.RTLD_GLOBAL)
    except OSError:
        path = os.environ.get("PROFTOP_LIB", "")
        if path:
            try:
                lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError as e:
                sys.stderr.write("proftop: cannot load PROFTOP_LIB=%s: %s\n" % (path, e))
                return None
    if lib is None or not _bind(lib):
        return None
    abi = lib.proftop_abi_version()
    if abi != ABI_VERSION:
        sys.stderr.write("proftop: %s has ABI %d, this proftop.py expects %d; disabled\n"
                         % (LIB_NAME, abi, ABI_VERSION))
        return None
    return lib


def batch_size(obj, depth=0):
    """First dimension of the first tensor found in obj (a tensor, or a sequence
    or dict holding one, 4 levels deep at most); 0 when there is none. The
    helpers count samples per step with it."""
    t = first_tensor(obj)
    return int(t.shape[0]) if t is not None and len(t.shape) > 0 else 0


def first_tensor(obj, depth=0):
    """The first tensor with a dimension in obj (a tensor, or a sequence or dict
    holding one, 4 levels deep at most), else None."""
    shape = getattr(obj, "shape", None)
    if shape is not None and hasattr(obj, "dim"):
        return obj if len(shape) > 0 else None
    if depth > 3:
        return None
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        for x in obj[:8]:
            t = first_tensor(x, depth + 1)
            if t is not None:
                return t
    return None


def lib():
    """The ctypes library when calls reach it, else None (for proftop_auto)."""
    return _lib if _on else None


def load():
    """(Re)looks for the library; returns True when calls now reach it."""
    global _lib, _on
    _lib = _open()
    _on = _lib is not None
    _names.clear()
    return _on


def enabled():
    """True when a proftop session is recording this process."""
    return _on and bool(_lib.proftop_enabled())


def _encode(name):
    if isinstance(name, bytes):
        return name
    return str(name).encode("utf-8", "surrogateescape")


def name_id(name):
    """The interned id of name (looked up once, then cached); 0 when disabled."""
    i = _names.get(name)
    if i is None:
        if not _on:
            return 0
        with _names_lock:
            i = _names.get(name)
            if i is None:
                i = _lib.proftop_name(_encode(name))
                _names[name] = i
    return i


def _phase_value(p):
    if isinstance(p, int):
        if 1 <= p <= 4:
            return p
    else:
        v = PHASES.get(str(p).lower())
        if v is not None:
            return v
    raise ValueError("unknown proftop phase %r (use dataloader, forward, backward, "
                     "optimization)" % (p,))


def step(samples=0):
    """Ends the current step of this thread and starts the next; samples = batch size."""
    if _on:
        _lib.proftop_step(int(samples) if samples else 0)


def step_begin():
    """Starts a step now without ending one (e.g. after evaluation)."""
    if _on:
        _lib.proftop_step_begin()


def phase_push(p):
    v = _phase_value(p)
    if _on:
        _lib.proftop_phase_push(v)


def phase_pop():
    if _on:
        _lib.proftop_phase_pop()


def range_push(name):
    if _on:
        _lib.proftop_range_push_id(name_id(name))


def range_pop():
    if _on:
        _lib.proftop_range_pop()


def op_push(name):
    if _on:
        _lib.proftop_op_push_id(name_id(name))


def op_pop():
    if _on:
        _lib.proftop_op_pop()


def mark(name):
    """An instant mark on this thread's track."""
    if _on:
        _lib.proftop_mark(_encode(name))


def counter(name, value):
    """A counter sample (shown as a time series)."""
    if _on:
        _lib.proftop_counter(_encode(name), float(value))


class _Scope:
    """A reusable context manager (and decorator) for one phase or named range."""
    __slots__ = ("_push", "_pop", "_arg")

    def __init__(self, push, pop, arg):
        self._push, self._pop, self._arg = push, pop, arg

    def __enter__(self):
        if _on:
            self._push(self._arg)
        return self

    def __exit__(self, *exc):
        if _on:
            self._pop()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


_scopes = {}


def phase(p):
    """with proftop.phase("forward"): ... - one of the four step phases."""
    key = ("phase", p)
    s = _scopes.get(key)
    if s is None:
        s = _scopes[key] = _Scope(phase_push, phase_pop, _phase_value(p))
    return s


def range(name):  # noqa: A001 - mirrors the C API's proftop_range_push
    """with proftop.range("eval"): ... - a user-defined range (UserDefined Summary)."""
    key = ("range", name)
    s = _scopes.get(key)
    if s is None:
        if len(_scopes) > 4096:
            _scopes.clear()
        s = _scopes[key] = _Scope(range_push, range_pop, name)
    return s


def op(name):
    """with proftop.op("attention"): ... - an operator range (Operator Summary)."""
    key = ("op", name)
    s = _scopes.get(key)
    if s is None:
        if len(_scopes) > 4096:
            _scopes.clear()
        s = _scopes[key] = _Scope(op_push, op_pop, name)
    return s


class _LazyTorch:
    """proftop.torch: the PyTorch helper, imported on first use (see proftop_torch.py)."""

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        mod = sys.modules.get("proftop_torch")
        if mod is None:
            here = os.path.dirname(os.path.abspath(__file__))
            if here not in sys.path:
                sys.path.append(here)
            import proftop_torch as mod
        return getattr(mod, attr)


torch = _LazyTorch()

load()
