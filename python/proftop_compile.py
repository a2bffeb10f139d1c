"""proftop_compile.py - torch.compile as the zero-code helper sees it.

proftop_auto.install() calls setup(); from then on, with no change to the
script:

- each compilation TorchDynamo runs (a frame's first compile, a recompile, a
  backward compiled when it first runs) is a user range on the thread that
  compiles, "torch.compile: compile" or "torch.compile: recompile" (the
  compile id's second number is above 0: the frame was compiled before and
  its guards failed). proftop's aggregator marks the steps that hold one as
  compiling and leaves them out of the steady-state figures;
- each graph break Dynamo finds while compiling is a zero-length range
  "torch.compile: graph break" at the end of that compilation, so the
  UserDefined table counts them and each step knows how many it found;
- while a thread compiles, the helper's own wrappers step aside (the
  compiler runs modules, autograd.grad and the like eagerly while it traces;
  none of that is the job's forward or backward): compiling(ts) says so.

It uses torch._dynamo.callback_handler (torch 2.5 and later). It is
registered when torch._dynamo is imported (or at once when it was already):
torch.compile itself is wrapped to import it, so a job that never compiles
never imports the compiler. Without the handler (torch 2.0-2.4) compiled
regions still run and are named, but compilations are not seen: one note
says so. Errors are the helper's own: counted by proftop_auto, never raised.
"""

import sys
import threading

_lib = None
_fail = None           # proftop_auto._fail
_ts = None             # proftop_auto._ts
_step_aside = None     # proftop_phases._fast_step_aside: the Python wrappers from now on
_ids = {}
_registered = False
_noted = False
_gb_total = 0          # graph breaks counted so far (Dynamo's counter)
_open = None           # (thread ident, ts) of the compilation open, or None
_said = False          # the first compilation's note is out
_lock = threading.Lock()


def _name(text):
    i = _ids.get(text)
    if i is None:
        i = _ids[text] = _lib.proftop_name(text.encode())
    return i


def _graph_breaks():
    utils = sys.modules.get("torch._dynamo.utils")
    c = getattr(utils, "counters", None)
    if c is None:
        return 0
    try:
        return int(sum(c["graph_break"].values()))
    except Exception:  # noqa: BLE001
        return 0


def _is_recompile(compile_id):
    """'F/N' (frame F, its Nth compile): N > 0 is a recompile."""
    s = str(compile_id).strip("[]!")
    parts = s.split("/")
    try:
        return len(parts) >= 2 and int(parts[1].split("_")[0]) > 0
    except ValueError:
        return False


def _on_start(args):
    global _open, _gb_total, _said
    try:
        _step_aside()
        if not _said:
            # said at once, while the first step still compiles (a step is
            # recorded only when it ends, and a first compile takes seconds)
            _said = True
            _lib.proftop_mark(b"proftop: torch.compile is compiling: its steps are marked C, "
                              b"not in the figures")
        with _lock:
            if _open is not None:
                return
            ts = _ts()
            ts.compiling += 1
            _open = (threading.get_ident(), ts)
            _gb_total = _graph_breaks()
        name = ("torch.compile: recompile" if _is_recompile(getattr(args, "compile_id", ""))
                else "torch.compile: compile")
        _lib.proftop_range_push_id(_name(name))
    except Exception as e:  # noqa: BLE001
        _fail(e)


def _on_end(args):
    global _open, _gb_total
    try:
        with _lock:
            op = _open
            _open = None
            if op is None:
                return
            op[1].compiling -= 1
            mine = op[0] == threading.get_ident()
            gb = _graph_breaks()
            new = gb - _gb_total if gb > _gb_total else 0
            _gb_total = gb
        if not mine:
            return  # ended on another thread: its range stays with the thread that began it
        _lib.proftop_range_pop()
        if new:
            gid = _name("torch.compile: graph break")
            for _ in range(min(new, 1000)):
                _lib.proftop_range_push_id(gid)
                _lib.proftop_range_pop()
    except Exception as e:  # noqa: BLE001
        _fail(e)


def _register():
    """Hooks Dynamo's compile callbacks once torch._dynamo is importable."""
    global _registered, _noted
    if _registered:
        return
    dyn = sys.modules.get("torch._dynamo")
    if dyn is None:
        return
    h = getattr(dyn, "callback_handler", None)
    if h is None:
        cb = sys.modules.get("torch._dynamo.callback")
        h = getattr(cb, "callback_handler", None)
    _registered = True
    if h is None or not hasattr(h, "register_start_callback"):
        if not _noted:
            _noted = True
            _lib.proftop_mark(b"proftop: torch.compile: this torch has no compile callbacks "
                              b"(torch 2.5 or later has them): compiling steps, graph breaks "
                              b"and recompilations are not marked")
        return
    h.register_start_callback(_on_start)
    h.register_end_callback(_on_end)


def _wrap_compile(orig):
    def compile(*args, **kwargs):
        try:
            _step_aside()
            import torch._dynamo  # noqa: F401 - what torch.compile imports anyway
            _register()
        except Exception as e:  # noqa: BLE001
            _fail(e)
        return orig(*args, **kwargs)
    compile.__wrapped__ = orig
    for k in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(compile, k, getattr(orig, k))
        except (AttributeError, TypeError):
            pass
    return compile


def compiled_label(mod):
    """The module a compiled wrapper runs (torch.compile(m) gives an
    OptimizedModule holding m; m.compile() compiles m in place), else None."""
    orig = getattr(mod, "_orig_mod", None)
    if orig is not None and type(mod).__name__ == "OptimizedModule":
        return orig
    if getattr(mod, "_compiled_call_impl", None) is not None:
        return mod
    return None


def setup(lib, torch, fail, ts, step_aside=lambda: None):
    """Installs the watch on torch.compile; False when torch has none.
    step_aside() is called before anything compiles (the first
    torch.compile call, each compilation's start)."""
    global _lib, _fail, _ts, _step_aside
    _lib, _fail, _ts, _step_aside = lib, fail, ts, step_aside
    comp = getattr(torch, "compile", None)
    if comp is None:
        return False
    if not getattr(comp, "_proftop_wrapped", False):
        w = _wrap_compile(comp)
        w._proftop_wrapped = True
        torch.compile = w
    _register()  # already imported (an attach, or a script that imported it)
    return True
