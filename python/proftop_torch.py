"""proftop_torch.py - proftop.torch: marks a PyTorch training loop for proftop
without editing it. Used through proftop.py::

    import proftop
    handle = proftop.torch.instrument(model, optimizer, loader)
    for x, y in loader:                 # each fetch   -> Dataloader phase
        loss = loss_fn(model(x), y)     # model(...)   -> Forward phase, one
        optimizer.zero_grad()           #                 operator per child module
        loss.backward()                 # backward     -> Backward phase
        optimizer.step()                # step         -> Optimization phase,
    handle.remove()                     #                 then proftop.step(batch size)

How each part is found (works with torch 1.13, Debian 12's python3-torch, and later):
- Forward: a forward pre-hook and a forward hook on the top-level module; child
  modules (direct children by default, every submodule with ops="all") get the
  same pair as operator ranges. If a forward raises, the ranges it left open are
  closed at the next dataloader fetch or optimizer step.
- Backward: torch.autograd.backward (which Tensor.backward calls) is wrapped
  while at least one instrumentation is active; the outermost call on a thread
  is the Backward phase. torch 1.13 has no module-level backward pre-hook, and
  autograd hooks may run on autograd's device threads, where a range could not
  be closed on the thread that opened it.
- Optimization: optimizer.step is wrapped on the instance (a bound method, so
  LR schedulers created afterwards can still wrap it in turn); after it returns,
  proftop.step(samples) ends the step.
- Dataloader: the loader object's class is swapped for a subclass whose
  __iter__ wraps the iterator, so `for batch in loader` needs no change; each
  __next__ is a Dataloader phase. wrap_loader(iterable) does the same for
  objects whose class cannot be swapped (lists, generators).
- Samples per step: the batch sizes fetched since the last step (first tensor's
  first dimension), else those of the model's inputs, unless samples= is given
  (an int per step, or a function batch -> samples per fetch).
Everything is a cheap no-op when proftop is not loaded (proftop.enabled() False).
"""

import sys
import threading
import types

import proftop

__all__ = ["instrument", "Instrumentation", "wrap_loader"]

_DATALOADER, _FORWARD, _BACKWARD, _OPTIMIZATION = 1, 2, 3, 4

_tls = threading.local()
_patch_lock = threading.Lock()
_active = 0            # active instrumentations (the backward wrapper checks it)
_orig_backward = None  # torch.autograd.backward before we wrapped it


def _state():
    st = getattr(_tls, "st", None)
    if st is None:
        st = _tls.st = types.SimpleNamespace(stack=[], bwd_depth=0)
    return st


def _pop_entry(entry):
    if entry[1] == "op":
        proftop.op_pop()
    else:
        proftop.phase_pop()


def _unwind(st):
    """Closes ranges a raising forward left open (ours only, innermost first)."""
    while st.stack:
        _pop_entry(st.stack.pop())


_batch_size = proftop.batch_size


def _wrapped_backward(*args, **kwargs):
    st = _state()
    if _active <= 0 or st.bwd_depth > 0:
        return _orig_backward(*args, **kwargs)
    st.bwd_depth += 1
    proftop.phase_push(_BACKWARD)
    try:
        return _orig_backward(*args, **kwargs)
    finally:
        proftop.phase_pop()
        st.bwd_depth -= 1


def _patch_backward(torch):
    global _active, _orig_backward
    with _patch_lock:
        if _active == 0 and torch.autograd.backward is not _wrapped_backward:
            _orig_backward = torch.autograd.backward
            torch.autograd.backward = _wrapped_backward
        _active += 1


def _unpatch_backward(torch):
    global _active
    with _patch_lock:
        _active -= 1
        if _active == 0 and torch.autograd.backward is _wrapped_backward:
            torch.autograd.backward = _orig_backward


class _ProfiledIter:
    """Wraps a loader's iterator: each __next__ is a Dataloader phase."""

    def __init__(self, inner, instr):
        self._inner = inner
        self._instr = instr

    def __iter__(self):
        return self

    def __next__(self):
        instr = self._instr
        if not instr._active:
            return next(self._inner)
        st = _state()
        _unwind(st)
        proftop.phase_push(_DATALOADER)
        try:
            batch = next(self._inner)
        finally:
            proftop.phase_pop()
        instr._count_batch(st, batch)
        return batch

    def __len__(self):
        return len(self._inner)

    def __getattr__(self, attr):
        return getattr(self._inner, attr)


def wrap_loader(iterable, instr=None):
    """Iterates iterable with each fetch marked as a Dataloader phase."""
    instr = instr or _Passive()
    return _ProfiledIter(iter(iterable), instr)


class _Passive:
    _active = True

    def _count_batch(self, st, batch):
        st.loader_samples = getattr(st, "loader_samples", 0) + _batch_size(batch)


class Instrumentation:
    """What instrument() returns; remove() undoes everything (also a context manager)."""

    def __init__(self, model, optimizer, dataloader=None, ops=True, samples=None):
        import torch
        auto = sys.modules.get("proftop_auto")
        if auto is not None:  # under proftop run: this script marks itself, once
            auto.stand_down()
        self._torch = torch
        self._active = True
        self._hooks = []
        self._model = model
        self._optimizer = optimizer
        self._loader = None
        self._loader_base = None
        self._samples = samples
        self._opt_orig = None
        self._opt_had_attr = False
        try:
            if model is not None:
                self._hook_model(model, ops)
            if optimizer is not None:
                self._wrap_optimizer(optimizer)
            if dataloader is not None:
                self._wrap_loader(dataloader)
            _patch_backward(torch)
            self._patched = True
        except BaseException:
            self._patched = False
            self.remove()
            raise

    # ---- samples per step
    def _count_batch(self, st, batch):
        s = self._samples
        if callable(s):
            n = s(batch)
        else:
            n = _batch_size(batch)
        st.loader_samples = getattr(st, "loader_samples", 0) + int(n or 0)

    def _take_samples(self, st):
        if isinstance(self._samples, int):
            n = self._samples
        else:
            n = getattr(st, "loader_samples", 0) or getattr(st, "fwd_samples", 0)
        st.loader_samples = 0
        st.fwd_samples = 0
        return n

    # ---- forward: the top module is the Forward phase, children are operators
    def _hook_model(self, model, ops):
        top = id(model)
        torch = self._torch

        def top_pre(module, inputs):
            if not self._active:
                return
            st = _state()
            if torch.is_grad_enabled():
                st.fwd_samples = getattr(st, "fwd_samples", 0) + _batch_size(inputs)
            proftop.phase_push(_FORWARD)
            st.stack.append((top, "phase"))

        self._hooks.append(model.register_forward_pre_hook(top_pre))

        if ops:
            if ops == "all":
                children = [(n, m) for n, m in model.named_modules() if m is not model]
            else:
                children = list(model.named_children())
            for name, child in children:
                label = "%s (%s)" % (name, type(child).__name__)
                self._hooks.append(child.register_forward_pre_hook(self._op_pre(label)))
                self._hooks.append(child.register_forward_hook(self._op_post()))

        def top_post(module, inputs, output):
            self._close(top)

        self._hooks.append(model.register_forward_hook(top_post))

    def _op_pre(self, label):
        def pre(module, inputs):
            if self._active:
                proftop.op_push(label)
                _state().stack.append((id(module), "op"))
        return pre

    def _op_post(self):
        def post(module, inputs, output):
            self._close(id(module))
        return post

    def _close(self, key):
        """Pops our entries down to and including the innermost one of key."""
        stack = _state().stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == key:
                while len(stack) > i:
                    _pop_entry(stack.pop())
                return

    # ---- optimizer: Optimization phase, then the step boundary
    def _wrap_optimizer(self, optimizer):
        self._opt_had_attr = "step" in vars(optimizer)
        orig = optimizer.step
        self._opt_orig = orig
        instr = self

        def step(opt_self, *args, **kwargs):
            if not instr._active:
                return orig(*args, **kwargs)
            st = _state()
            _unwind(st)
            proftop.phase_push(_OPTIMIZATION)
            try:
                result = orig(*args, **kwargs)
            finally:
                proftop.phase_pop()
            proftop.step(instr._take_samples(st))
            return result

        step.__name__ = getattr(orig, "__name__", "step")
        step.__doc__ = getattr(orig, "__doc__", None)
        self._opt_wrapper = types.MethodType(step, optimizer)
        optimizer.step = self._opt_wrapper

    # ---- dataloader: swap its class for one whose __iter__ wraps the iterator
    def _wrap_loader(self, loader):
        base = type(loader)
        instr = self

        def __iter__(obj):
            it = base.__iter__(obj)
            return _ProfiledIter(it, instr) if instr._active else it

        sub = type(base.__name__, (base,), {"__iter__": __iter__, "__module__": base.__module__,
                                             "__qualname__": base.__qualname__})
        try:
            loader.__class__ = sub
        except TypeError as e:
            raise TypeError("proftop.torch.instrument: cannot wrap a %s as dataloader (%s); "
                            "iterate proftop.torch.wrap_loader(loader) instead"
                            % (base.__name__, e)) from None
        self._loader = loader
        self._loader_base = base
        self._loader_sub = sub

    def remove(self):
        """Removes the hooks and wrappers; safe to call twice."""
        if not getattr(self, "_active", False):
            return
        self._active = False
        for h in self._hooks:
            h.remove()
        self._hooks = []
        opt = self._optimizer
        if opt is not None and self._opt_orig is not None:
            if vars(opt).get("step") is self._opt_wrapper:
                if self._opt_had_attr:
                    opt.step = self._opt_orig
                else:
                    del opt.step
            # else something wrapped ours (an LR scheduler): it now passes through
        if self._loader is not None and type(self._loader) is self._loader_sub:
            self._loader.__class__ = self._loader_base
        if getattr(self, "_patched", False):
            self._patched = False
            _unpatch_backward(self._torch)
        _unwind(_state())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def instrument(model, optimizer, dataloader=None, ops=True, samples=None):
    """Marks a PyTorch training loop for proftop; returns an Instrumentation.

    model: the top-level nn.Module (its forward is the Forward phase; ops=True
    makes each direct child an operator, ops="all" every submodule, ops=False
    none). optimizer: its step() is the Optimization phase and ends a proftop
    step. dataloader: an iterable (e.g. torch.utils.data.DataLoader) whose
    fetches are the Dataloader phase. samples: samples per step (an int), or a
    function batch -> samples per fetch (default: the first dimension of the
    batch's first tensor, summed over the fetches of a step, else over the
    model's inputs while gradients are enabled).
    """
    return Instrumentation(model, optimizer, dataloader, ops=ops, samples=samples)
