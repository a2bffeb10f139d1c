"""proftop_steps.py - the zero-code helper's steps: the rules that make
steps out of the phases proftop_phases marks (one per optimizer step; per
backward in a loop without one; per outermost forward before either), the
samples of each, gradient accumulation and optimizers stepping apart (a
GAN's D and G), and a loop fed by a generator rather than a DataLoader
(_feed_prof). The rules themselves are told in proftop_auto's docstring.

Loaded by proftop_auto, which owns the state every part shares; names of
the other parts through their modules: _a (proftop_auto), _dp (proftop_data).
"""

import sys

import proftop

_a = _dp = None  # set by proftop_auto when it loads this module


# ---- steps

def _emit_step(ts):
    """Closes the open step at ts.pending; the next one starts there."""
    if _a._ctl is not None and _a._ctl._cap is not None:
        stopped = _a._ctl.before_emit(ts)  # a capture's last step: its stop counts in it
        if stopped is not None:
            ts.pending = stopped
    end = ts.pending
    ts.pending = ts.soft = None
    start = ts.start if ts.start is not None else end
    ts.start = end
    samples = _a._batch_fixed or ts.loader_samples or ts.fwd_samples
    tokens = ts.loader_tokens or ts.fwd_tokens
    ts.loader_samples = ts.fwd_samples = ts.loader_tokens = ts.fwd_tokens = 0
    ts.fetches = 0
    if ts.partial:
        ts.partial = False  # attached mid-step: steps start at this boundary
        if _a._ctl is not None:
            _control(ts)
        return
    rule = ("forward" if not _a._train else "backward" if not _a._opt_seen
            else "batch" if _a._batch_rule and not _a._fetch_rule_off else "optimizer")
    if rule != _a._rule:
        _a._rule = rule
        if rule == "batch":
            text = ("proftop: steps: one per batch fetched: several optimizers step between "
                    "two DataLoader fetches (a GAN's D and G) and are one training iteration "
                    "(torch %s, zero-code helper)" % _a._torch.__version__)
        elif rule == "optimizer":
            text = ("proftop: steps: one per optimizer step (torch %s, zero-code helper)"
                    % _a._torch.__version__)
        elif rule == "backward":
            text = ("proftop: steps: one per backward, each up to the next forward: no "
                    "optimizer step seen (weights updated by hand?) (torch %s, zero-code "
                    "helper)" % _a._torch.__version__)
        else:
            text = ("proftop: steps: one per outermost model forward: no optimizer step or "
                    "backward seen (torch %s, zero-code helper)" % _a._torch.__version__)
        _a._lib.proftop_mark(text.encode())
    _a._lib.proftop_step_span(start, end, samples)
    if tokens and _a._step_tokens is not None:
        _a._step_tokens(tokens)
    _a._steps += 1
    if _a._helper_stats is not None:
        _a._helper_stats(_a._helper_calls(), _a._cost_ps)
    if _a._ctl is not None:
        _control(ts)
    if _a._attach:
        _a._check_reader()


def _control(ts):
    """Once per step: what proftop asked for (a deep capture, proftop_capture.py)."""
    try:
        _a._ctl.boundary(ts, _a._steps)
    except Exception as e:  # noqa: BLE001
        _a._fail(e)


def _begin(ts, fetch=False):
    """A fetch, outermost forward, backward or optimizer step begins."""
    if fetch and ts.pending is None and ts.soft is not None:
        ts.pending = ts.soft  # forward, forward, fetch and no backward: inference
    if ts.pending is not None and not fetch and ts.fetches and _a._opt_seen and \
            not _a._fetch_rule_off:
        # an optimizer stepped and more work follows before the next fetch
        # (a GAN's G after its D): the batch's iteration may not be over
        _hold(ts)
    elif fetch and ts.held:
        if ts.pending is None:
            ts.pending = ts.held[-1][0]  # the iteration ended at its last optimizer step
        if len(ts.held) > 1 or ts.pending != ts.held[-1][0]:
            _a._batch_rule = True  # two or more optimizer steps in one batch's iteration
        ts.held = []
    if ts.bwd_end:
        ts.bwd_end = False
        if ts.pending is None and not _a._opt_seen:
            # backward, (a hand-written update), then this: a step's end once
            # the backward rule holds; until then kept (an optimizer may
            # still come: gradient accumulation)
            if _a._bwd_rule:
                ts.pending = _a._now()
            else:
                _bwd_mark(ts, _a._now())
    if ts.pending is not None:
        _emit_step(ts)
    if ts.start is None:
        ts.start = _a._now()
    if fetch:
        ts.fetches += 1


def _hold(ts):
    """The step's end is kept, not emitted, until the next fetch says whether
    the iteration went on; past HOLD_MAX optimizer steps without a fetch the
    loop does not fetch a batch per iteration (it trains on one batch): the
    kept ends become steps, and every optimizer step ends one from then on."""
    ts.held.append((ts.pending,) + _counts(ts))
    ts.pending = None
    if len(ts.held) <= _a.HOLD_MAX:
        return
    _a._fetch_rule_off = True
    marks, ts.held = ts.held, []
    _emit_marks(ts, marks)


def _saw_opt(ts):
    """An optimizer steps: steps end at optimizer steps from now on (the
    backward rule's kept ends are dropped: this step ends at this one)."""
    if not _a._opt_seen:
        _a._opt_seen = True
        ts.bwd_end = False
        ts.bwd_marks = []


def _bwd_mark(ts, now):
    """A backward-rule step end while it is not yet sure that no optimizer
    comes; after BWD_RULE_AFTER of them the rule holds and they are steps."""
    # the sample counts so far, not reset: an optimizer that comes after all
    # finds its step's samples whole
    ts.bwd_marks.append((now,) + _counts(ts))
    if len(ts.bwd_marks) >= _a.BWD_RULE_AFTER:
        _a._bwd_rule = True
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
    if not _a._train:
        _a._train = True
        # the forward-end boundaries of the inference rule no longer hold
        with _a._lock:
            for ts in list(_a._all_ts):
                ts.pending = ts.soft = None


_batch_size = proftop.batch_size
_first_tensor = proftop.first_tensor
_seq_first_types = ()  # RNNs and attention layers, when their batch_first is False


def _tokens(t):
    """Token ids in t: its numel when it holds integer indices (a language
    model's input), else 0."""
    if t.is_floating_point() or t.is_complex() or t.dtype is _a._torch.bool:
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
        if not (fn.startswith(_torch_dir) or fn.startswith(_a._here) or fn.startswith("<frozen")):
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
        if _a._off or _dp._forked or not _feed_on:
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
        ts = _a._ts()
        if ts.gen_open or ts.depth or ts.in_bwd or ts.in_opt or ts.in_fetch or ts.compiling:
            return
        _begin(ts, fetch=True)
        _a._lib.proftop_phase_push(_a._DATALOADER)
        ts.gen_open = True
    except Exception as e:  # noqa: BLE001
        _a._fail(e)


def _feed_arm(ts):
    """An outermost model, loss, backward or optimizer call returned: the
    loop may fetch its next batch."""
    if (_feed_on and _loop_codes and not ts.depth and not ts.in_bwd and not ts.in_opt and
            not ts.in_fetch and not ts.gen_open and sys.getprofile() is None and
            (_a._ctl is None or _a._ctl._cap is None)):
        sys.setprofile(_feed_prof)


def _feed_disarm(ts):
    """Such a call begins: the fetch, if one began, ends here."""
    if not _feed_on and not ts.gen_open:
        return  # a DataLoader feeds the job (a profile function left armed removes itself)
    if sys.getprofile() is _feed_prof:
        sys.setprofile(None)
    if ts.gen_open:
        ts.gen_open = False
        _a._lib.proftop_phase_pop()


def _feed_close(ts):
    """The thread ends: the fetch open on it ends."""
    if ts.gen_open:
        ts.gen_open = False
        try:
            _a._lib.proftop_phase_pop()
        except Exception:  # noqa: BLE001
            pass
