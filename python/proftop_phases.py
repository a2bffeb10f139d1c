"""proftop_phases.py - the zero-code helper's marks: the wrappers of
nn.Module.__call__ (the Forward phase and one operator per module, named
by its module label), of torch.autograd.backward/grad (Backward), of every
optimizer's step and zero_grad and every LR scheduler's step
(Optimization), torch 2.x's global optimizer hooks for the steps a wrapper
cannot reach, and the module labels ("features.0 (Conv2d)").

Loaded by proftop_auto, which owns the state every part shares; names of
the other parts through their modules: _a (proftop_auto), _st (proftop_steps).
"""

import functools
import sys

_a = _st = None  # set by proftop_auto when it loads this module


# ---- module labels

def _name_id(text):
    return _a._lib.proftop_name(text.encode("utf-8", "replace"))


def _build_labels(root):
    """{id(module): (name id or 0 past the depth, depth)} for root's module tree.
    Depth counts the modules a call goes through: a ModuleList or ModuleDict
    is never called, so its items sit at its own depth ("blocks.0.layers.1"
    is depth 2 below the root: blocks.0, then its layers.1)."""
    base = root
    if isinstance(root, _a._wrapper_roots) and hasattr(root, "module"):
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
    if _a._multi_root:
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
    if isinstance(base, _st._seq_first_types) and not getattr(base, "batch_first", True):
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
                                if depth <= _a._max_depth else 0, depth)
                if comp is not child:
                    seen.add(id(comp))
                    m[id(comp)] = (0, depth)
                child = comp
            else:
                m[id(child)] = (_name_id("%s (%s)" % (qual, type(child).__name__))
                                if depth <= _a._max_depth else 0, depth)
            if isinstance(child, _st._seq_first_types) and not getattr(child, "batch_first", True):
                m[-2] = (0, 0)  # a sequence-first model: (seq, batch) inputs
            stack.append((child, qual + ".", depth if isinstance(child, _a._containers)
                          else depth + 1))
    return m


def _compiled_of(mod):
    """The module a torch.compile wrapper runs, else None."""
    if _a._comp is None:
        return None
    return _a._comp.compiled_label(mod)


def _labels_of(root):
    m = _a._labels.get(root)
    if m is None:
        _note_root(root)
        m = _a._labels[root] = _build_labels(root)
    return m


_root_names = None  # WeakKeyDictionary root -> its name in labels, once there are two


def _note_root(root):
    """A model called outermost for the first time. Once there are two, or
    at the first when the frame that holds it holds another model too (a
    GAN's netG beside netD), every root's labels carry its root's name."""
    if _a._multi_root or root in _a._roots:
        return
    _a._roots.add(root)
    if len(_a._roots) < 2:
        name, scope = _find_name(root)
        if name is None or not _other_model_in(scope, root):
            return
    _a._multi_root = True
    for r in list(_a._roots):
        _root_name(r)
    _a._labels.clear()


def _other_model_in(scope, root):
    """Whether scope (a frame's variables) holds a model besides root that is
    not a loss and neither holds root nor is held by it."""
    mine = None
    for v in list(scope.values()):
        if v is root or not isinstance(v, _a._torch.nn.Module) or isinstance(v, _a._loss_base):
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
    for f in _st._script_frames(f, 24):
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
        m = _a._labels[ts.root] = _build_labels(ts.root)
        ts.names = m
        ent = m.get(key)
        if ent is not None:
            return ent
    ent = (_name_id("(%s)" % type(mod).__name__) if ts.depth <= _a._max_depth else 0, ts.depth)
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
        if _a._off or (_a._compiling is not None and _a._compiling()):
            return orig(self, *args, **kwargs)
        code = 0
        try:
            ts = _a._tls.ts
        except AttributeError:
            ts = _a._ts()
        if ts.compiling:
            return orig(self, *args, **kwargs)  # the compiler running modules as it traces
        _a._ncalls += 1
        d = ts.depth
        try:
            if d == 0:
                code = _root_enter(ts, self, args)
            else:
                ent = ts.names.get(id(self)) if ts.names is not None else None
                if ent is None and ts.names is not None:
                    ent = _label_miss(ts, self)
                if ent is not None and ent[0]:
                    _a._lib.proftop_op_push_id(ent[0])
                    code = 1
        except Exception as e:  # noqa: BLE001 - the helper's own error
            _a._fail(e)
        ts.depth = d + 1
        try:
            return orig(self, *args, **kwargs)
        finally:
            ts.depth = d
            if code:
                try:
                    if code == 1:
                        _a._lib.proftop_op_pop()
                    else:
                        _root_exit(ts, code)
                except Exception as e:  # noqa: BLE001
                    _a._fail(e)
    slow = functools.wraps(orig)(__call__)
    if _a._fast_on and _compiling_seen is False:
        return _a._fast.module_call(orig, slow, _label_miss)
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
    nn = getattr(_a._torch, "nn", None)
    cur = getattr(getattr(nn, "Module", None), "__call__", None)
    slow = getattr(cur, "slow", None)
    if slow is not None and _a._fast is not None and type(cur).__module__ == "_proftop_fast":
        nn.Module.__call__ = slow


def _root_enter(ts, mod, args):
    """Outermost module call: the Forward phase (2), or a loss on its own (3)."""
    _a._activity = True
    _st._feed_disarm(ts)
    if _st._feed_look:
        _st._feed_learn()
    if isinstance(mod, _a._loss_base):
        _a._lib.proftop_phase_push(_a._FORWARD)
        _a._lib.proftop_op_push_id(_loss_label(mod))
        ts.names = None
        ts.root = None
        return 3
    _st._begin(ts)
    # the phase opens before the helper's own look at the model and its
    # inputs: a script's clock around the call counts that time as its
    # forward too (in a real loop, with caches cold after the last
    # operator, it was 10-20 us a call outside the phase)
    _a._lib.proftop_phase_push(_a._FORWARD)
    ts.names = names = _labels_of(mod)
    if not _a._batch_fixed and (_a._grad_enabled() or not _a._train):
        n, tok = _st._fwd_batch(names, args)
        ts.fwd_samples += n
        ts.fwd_tokens += tok
    ts.root = mod
    comp = names.get(-1)
    if comp is not None:
        _a._lib.proftop_op_push_id(comp)  # the compiled region
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
        _a._lib.proftop_op_pop()
    _a._lib.proftop_phase_pop()
    root = ts.root
    ts.names = None
    ts.root = None
    _st._feed_arm(ts)
    if code != 3 and not _a._train:
        # inference: a step per outermost forward. Without no_grad and in
        # training mode it may be the first forward of a training step (a
        # second model, the loss, then backward): a step only if a fetch
        # comes next, not another forward.
        if not _a._grad_enabled() or not getattr(root, "training", True):
            ts.pending = _a._now()
        else:
            ts.soft = _a._now()


def _wrap_phase(orig, phase, flag, fetch=False, train=False, samples=False):
    """The outermost call of orig on a thread is a phase that may begin a step:
    backward/grad (train: it marks a training job), a DataLoader's __next__
    or __iter__ (fetch; with samples, the batch it returns counts toward the
    step's samples). flag is
    the _TS slot that tells an inner call (a loader wrapping a loader)."""
    def wrapper(*args, **kwargs):
        if _a._off:
            return orig(*args, **kwargs)
        ts = _a._ts()
        if getattr(ts, flag) or ts.compiling:
            return orig(*args, **kwargs)
        pushed = False
        try:
            _a._activity = True
            _st._feed_disarm(ts)
            if fetch:
                _st._feed_on = False  # a DataLoader feeds the loop: it is timed as such
            if train:
                _st._set_train()
            _st._begin(ts, fetch=fetch)
            _a._lib.proftop_phase_push(phase)
            pushed = True
        except Exception as e:  # noqa: BLE001
            _a._fail(e)
        setattr(ts, flag, True)
        try:
            out = orig(*args, **kwargs)
        finally:
            setattr(ts, flag, False)
            if pushed:
                try:
                    _a._lib.proftop_phase_pop()
                    _st._feed_arm(ts)
                except Exception as e:  # noqa: BLE001
                    _a._fail(e)
                if train and not _a._opt_seen:
                    ts.bwd_end = True
        if samples and not _a._batch_fixed:
            try:
                n, tok = _st._loader_batch(args[0] if args else None, out)
                ts.loader_samples += n
                ts.loader_tokens += tok
            except Exception as e:  # noqa: BLE001
                _a._fail(e)
        return out
    if train and flag == "in_bwd" and not fetch and not samples and _a._fast_on and \
            _a._root_fast:
        # backward: its common case in C (the Python wrapper once torch.compile is used)
        fast = _a._fast.step_call(orig, wrapper, None, 3)
        slow = wrapper

        def wrapper(*args, **kwargs):  # noqa: F811
            if _compiling_seen:
                return slow(*args, **kwargs)
            return fast(args, kwargs)
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
        if _a._off:
            return orig(self, *args, **kwargs)
        ts = _a._ts()
        if ts.in_opt or ts.compiling:
            return orig(self, *args, **kwargs)  # super().step(), step() calling zero_grad()
        pushed = False
        try:
            _a._activity = True
            _st._feed_disarm(ts)
            if role == "step":
                _st._set_train()
                _st._saw_opt(ts)
                if ts.pending is None:
                    _st._begin(ts)
                pushed = True
            elif ts.start is not None or ts.pending is not None:
                pushed = True  # not before the first step (a scheduler's first step() in __init__)
            if pushed:
                _a._lib.proftop_phase_push(_a._OPTIMIZATION)
                _a._lib.proftop_op_push_id(_method_label(self, meth))
        except Exception as e:  # noqa: BLE001
            pushed = False
            _a._fail(e)
        ts.in_opt = True
        try:
            return orig(self, *args, **kwargs)
        finally:
            ts.in_opt = False
            if pushed:
                try:
                    _a._lib.proftop_op_pop()
                    _a._lib.proftop_phase_pop()
                    if role == "step" or ts.pending is not None:
                        ts.pending = _a._now()
                    _st._feed_arm(ts)
                except Exception as e:  # noqa: BLE001
                    _a._fail(e)
    if _a._fast_on and _a._root_fast:
        # its common case in C; the Python method above (slow) keeps every
        # other, and this stays a function (torch and LR schedulers look for
        # one on an optimizer's step: __func__, __wrapped__, attributes).
        # Once torch.compile is used, the Python method (Dynamo traces
        # Python, not C: _fast_step_aside).
        fast = _a._fast.step_call(orig, method, meth, 1 if role == "step" else 2)
        slow = method

        def method(self, *args, **kwargs):  # noqa: F811
            if _compiling_seen:
                return slow(self, *args, **kwargs)
            return fast(self, args, kwargs)
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
    if _a._off:
        return None
    try:
        ts = _a._ts()
        if ts.in_opt or ts.compiling:
            return None
        if ts.hooked is not None:
            if ts.hooked is not opt:
                return None  # an optimizer stepping inside another's step
            _hook_close(ts)  # its last step raised
        _a._activity = True
        _st._feed_disarm(ts)
        _st._set_train()
        _st._saw_opt(ts)
        if ts.pending is None:
            _st._begin(ts)
        _a._lib.proftop_phase_push(_a._OPTIMIZATION)
        _a._lib.proftop_op_push_id(_method_label(opt, "step"))
        ts.hooked = opt
    except Exception as e:  # noqa: BLE001
        _a._fail(e)
    return None


def _hook_close(ts):
    ts.hooked = None
    _a._lib.proftop_op_pop()
    _a._lib.proftop_phase_pop()
    ts.pending = _a._now()
    _st._feed_arm(ts)


def _opt_post_hook(opt, args, kwargs):
    if _a._off:
        return
    try:
        ts = _a._ts()
        if ts.hooked is opt and not ts.in_opt:
            _hook_close(ts)
    except Exception as e:  # noqa: BLE001
        _a._fail(e)


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
            _a._fail(e)
    return n


def _wrap_opt_init(orig):
    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        try:
            _wrap_class_methods(type(self), ("step",), "step")
            _wrap_class_methods(type(self), ("zero_grad",), "extra")
        except Exception as e:  # noqa: BLE001
            _a._fail(e)
    return functools.wraps(orig)(__init__)
