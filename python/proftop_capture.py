"""proftop_capture.py - deep capture on demand, inside the job.

proftop (a key on its screen, or `proftop capture -p PID --steps N`) asks
the job's zero-code helper, through the control word in the session's
shared-memory header (include/proftop/shm.h, struct pt_shm_ctl), to run
torch's own profiler for the next N steps. proftop_auto calls boundary()
at each step boundary of a thread; this module:

- reads the request word (one call into the probe per step; nothing else
  happens while no request is new and no capture runs);
- starts torch.profiler at the next step boundary, or, when the request
  names a step (PT_SHM_CTL_AT_STEP: proftop asks every rank of a job for
  the same steps), at the boundary where that step begins; a rank already
  past it refuses with the step it is at (CPU activity, input
  shapes, FLOPs of the ops torch has formulas for), records the marker
  "proftop/sync#<seq>" inside the profiler between two readings of the
  session clock (again while the bracket is wider than 20 us: the thread
  was preempted; the last one counts), so proftop can put the trace on the
  session's clock;
- stops it after N steps, at a step boundary, on the same thread (the stop
  is counted in the last captured step); where torch's stop is known to be
  "end recording, then build the event list" (torch 1.x and 2.0 without
  CUDA timing), only the first part runs there (about 3-10 ms instead of
  about 90 ms for 900 events on a small CPU) and the list is built in the
  writer thread;
- writes the trace in a thread of its own, so the steps go on meanwhile:
  to "<session dir>/<pid>.capture-<seq>.json" (the probe says where: the
  per-user session directory, mode 0700), first under a temporary name
  created with O_EXCL and mode 0600, then renamed, so a reader never sees
  half a file;
- answers with its state (running, steps done, writing, done, failed,
  cancelled) and one line when something went wrong.

CUDA: only one CUPTI subscriber may exist in a process. While proftop's own
collector runs (or will start at cuInit) torch records CPU activity only,
and proftop's kernels link to the captured operators by launch; without it,
torch collects CUDA activity itself.

Torch versions: torch.profiler.profile (1.8.1+); with Kineto the trace is
torch's own export_chrome_trace; without it (Debian's CPU-only build falls
back to the legacy autograd profiler, whose export has no input shapes) the
trace is written here from the profiler's events. Older torch: the autograd
profiler. Whatever fails inside torch is caught, answered as "failed" with
the reason, and the job goes on; the profiler is never left running.
"""

import json
import os
import threading

# shm.h
_ACCEPTED, _RUNNING, _WRITING, _DONE, _FAILED, _CANCELLED = 1, 2, 3, 4, 5, 6
_CAP_CAPTURE, _CAP_KINETO, _CAP_CUDA = 0x1, 0x2, 0x4
_CTL_CANCEL = 0x2
_CTL_AT_STEP = 0x4
MAX_STEPS = 1000
_SYNC_NS = 20000   # a marker bracket this tight is kept
_SYNC_TRIES = 8

_lib = None
_torch = None
_seen = 0          # the last request word looked at
_cap = None        # the capture in progress (one per process)
_last_file = None  # the previous capture's file (removed when the next starts)
_writer = None     # the thread writing the last capture
_started = 0       # the last request taken up
_pending = None    # (seq, steps, flags, step) of a request waiting for its step
_lock = threading.Lock()


def _kineto(torch):
    f = getattr(torch.autograd, "kineto_available", None)
    try:
        return bool(f()) if f is not None else False
    except Exception:  # noqa: BLE001
        return False


def setup(lib, torch):
    """Says the helper answers capture requests; returns the caps set."""
    global _lib, _torch, _seen
    if not hasattr(lib, "proftop_control") or not hasattr(lib, "proftop_capture_path"):
        return 0
    _lib = lib
    _torch = torch
    _seen = lib.proftop_control()  # a request from before this helper is not ours
    caps = _CAP_CAPTURE
    if _kineto(torch):
        caps |= _CAP_KINETO
    lib.proftop_control_caps(caps)
    return caps


def _answer(seq, state, done, msg=None):
    try:
        _lib.proftop_control_answer(seq, state, done,
                                    None if msg is None else msg[:250].encode("utf-8", "replace"))
    except Exception:  # noqa: BLE001
        pass


def _why(e):
    text = ("%s: %s" % (type(e).__name__, e)).replace("\n", " ")
    return text[:200]


class _Busy(Exception):
    """Not an error of torch's: a reason the capture cannot run now."""


class _Capture(object):
    def __init__(self, seq, steps, flags, owner, first_step):
        self.seq = seq
        self.first_step = first_step  # the job's number of the first captured step
        self.steps = steps
        self.flags = flags
        self.owner = owner          # the stepping thread's state object
        self.done = 0
        self.prof = None
        self.mode = None            # "kineto", "legacy", "autograd"
        self.marker = "proftop/sync#%d" % seq
        self.t0 = self.t1 = self.lo = self.hi = 0
        self.start_block = self.stop_block = 0
        self.unparsed = None        # a split stop's profiler, its events not built yet
        self.tid = threading.get_native_id() if hasattr(threading, "get_native_id") else 0

    # -- on the stepping thread, at a step boundary

    def start(self):
        torch = _torch
        enabled = getattr(torch.autograd, "_profiler_enabled", None)
        if enabled is not None and enabled():
            # the script's own profiler: starting ours would stop it at our end
            raise _Busy("torch's profiler is already running in this job (the script's own "
                        "torch.profiler?); try again when it is done")
        now = _lib.proftop_now
        t_a = now()
        tp = getattr(torch, "profiler", None)
        kineto = _kineto(torch)
        if tp is not None and hasattr(tp, "profile"):
            acts = [tp.ProfilerActivity.CPU]
            cuda = getattr(tp.ProfilerActivity, "CUDA", None)
            gpu = getattr(_lib, "proftop_gpu_collector", None)
            if (cuda is not None and kineto and gpu is not None and gpu() == 0 and
                    getattr(torch, "cuda", None) is not None and torch.cuda.is_available()):
                acts.append(cuda)  # nobody else holds CUPTI: torch collects kernels
            self.cuda = len(acts) > 1
            try:
                self.prof = tp.profile(activities=acts, record_shapes=True, with_flops=True)
            except TypeError:
                self.prof = tp.profile(activities=acts, record_shapes=True)
            self.mode = "kineto" if kineto else "legacy"
            self.prof.start()
        else:
            ap = torch.autograd.profiler
            self.cuda = False
            try:
                self.prof = ap.profile(record_shapes=True, with_flops=True)
            except TypeError:
                self.prof = ap.profile(record_shapes=True)
            self.mode = "autograd"
            self.prof.__enter__()
        rf = torch.autograd.profiler.record_function
        # the marker between two clock readings, about 5 us apart; a
        # bracket the thread was preempted in (or the profiler's first
        # record, slower) is tried again: proftop uses the last marker
        for _ in range(_SYNC_TRIES):
            self.lo = now()
            with rf(self.marker):
                pass
            self.hi = now()
            if self.hi - self.lo <= _SYNC_NS:
                break
        self.t0 = t_a
        self.start_block = self.hi - t_a

    def _split(self):
        """The autograd profiler whose stop can be split, else None: torch
        builds its event list (about 0.1 ms per event on a small CPU) inside
        its stop; on the stepping thread only recording has to end, the
        list is built in the writer thread (_parse). Only where the stop is
        known to be exactly that (disable, parse, tree: torch 1.9 to 2.0
        without CUDA timing) and our export reads function_events."""
        if self.mode not in ("legacy", "autograd"):
            return None
        ap = self.prof.profiler if self.mode == "legacy" else self.prof
        ver = str(_torch.__version__)
        if not (ver.startswith("1.") or ver.startswith("2.0")):
            return None
        if (ap is None or getattr(_torch.autograd, "_disable_profiler", None) is None or
                not getattr(ap, "enabled", False) or getattr(ap, "use_cuda", True) or
                not hasattr(ap, "_parse_kineto_results") or
                not hasattr(ap, "profile_memory") or not hasattr(ap, "with_flops")):
            return None
        return ap

    def stop(self):
        """Stops the profiler; returns the session time after it."""
        now = _lib.proftop_now
        t = now()
        try:
            ap = self._split()
            if ap is not None:
                ap.kineto_results = _torch.autograd._disable_profiler()
                self.unparsed = ap
            elif self.mode == "autograd":
                self.prof.__exit__(None, None, None)
            else:
                self.prof.stop()
        finally:
            self.t1 = now()
            self.stop_block = self.t1 - t
        return self.t1

    def _parse(self):
        """In the writer thread: the event list a split stop left to build."""
        ap, self.unparsed = self.unparsed, None
        if ap is None:
            return
        from torch.autograd.profiler_util import EventList
        ev = EventList(ap._parse_kineto_results(ap.kineto_results), use_cuda=False,
                       profile_memory=ap.profile_memory, with_flops=ap.with_flops)
        ev._build_tree()
        ap.function_events = ev

    def abandon(self):
        """Stops a running profiler after an error or a cancel; keeps nothing."""
        p, self.prof = self.prof, None
        if p is None:
            return
        try:
            if self.mode == "autograd":
                p.__exit__(None, None, None)
            else:
                p.stop()
        except Exception:  # noqa: BLE001
            pass

    # -- in the writer thread

    def write(self, path):
        tmp = path + ".tmp"
        t = _lib.proftop_now()
        try:
            os.unlink(tmp)
        except OSError:
            pass
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) |
                     getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            if self.mode == "kineto":
                os.close(fd)
                fd = -1
                self.prof.export_chrome_trace(tmp)  # reopens the file we made
            else:
                with os.fdopen(fd, "w") as f:
                    fd = -1
                    self._write_events(f)
            os.rename(tmp, path)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return _lib.proftop_now() - t

    def _write_events(self, f):
        """The legacy profiler's events as a Chrome trace with input shapes
        and torch's FLOPs (its own export has neither)."""
        self._parse()
        p = self.prof.profiler if self.mode == "legacy" else self.prof
        events = p.function_events
        mthread = None
        for e in events:
            if e.name == self.marker:
                mthread = e.thread
                break
        pid = os.getpid()
        f.write('{"traceEvents":[\n')
        first = True
        for e in events:
            if getattr(e, "is_async", False) or e.name.startswith("ProfilerStep#"):
                continue
            tr = e.time_range
            ev = {"ph": "X", "cat": "user_annotation" if e.name == self.marker else "cpu_op",
                  "name": e.name, "pid": pid,
                  "tid": self.tid if e.thread == mthread else "torch thread %d" % e.thread,
                  "ts": tr.start, "dur": max(tr.end - tr.start, 0)}
            args = {}
            shapes = getattr(e, "input_shapes", None)
            if shapes:
                args["Input Dims"] = shapes
            fl = getattr(e, "flops", 0)
            if fl:
                args["flops"] = fl
            if args:
                ev["args"] = args
            f.write(("" if first else ",\n") + json.dumps(ev, separators=(",", ":")))
            first = False
        f.write('\n],"displayTimeUnit":"ms","otherData":{"proftop_capture":%d,"torch":%s,'
                '"profiler":"%s"}}\n' % (self.seq, json.dumps(_torch.__version__), self.mode))


def _path(seq):
    import ctypes
    buf = ctypes.create_string_buffer(4096)
    if _lib.proftop_capture_path(seq, buf, len(buf)) != 0:
        return None
    return buf.value.decode("utf-8", "surrogateescape")


def _begin(seq, steps, flags, owner, first_step):
    """A new request at a step boundary of owner's thread: starts at once."""
    global _cap, _last_file
    if steps < 1 or steps > MAX_STEPS:
        _answer(seq, _FAILED, 0, "a capture takes 1 to %d steps, not %d" % (MAX_STEPS, steps))
        return
    if _last_file:
        try:
            os.unlink(_last_file)
        except OSError:
            pass
        _last_file = None
    c = _Capture(seq, steps, flags, owner, first_step)
    try:
        c.start()
    except _Busy as e:
        _answer(seq, _FAILED, 0, str(e))
        return
    except Exception as e:  # noqa: BLE001 - torch's profiler failed: the job goes on
        c.abandon()
        _answer(seq, _FAILED, 0, "torch.profiler could not start (torch %s): %s"
                % (_torch.__version__, _why(e)))
        return
    _cap = c
    _answer(seq, _RUNNING, 0)


def _finish(c):
    """After the last captured step: stopped already; writes in a thread."""
    global _cap
    _cap = None
    _answer(c.seq, _WRITING, c.done)

    def run():
        global _last_file
        path = _path(c.seq)
        try:
            if path is None:
                raise OSError("no session: nowhere to write")
            wrote = c.write(path)
        except Exception as e:  # noqa: BLE001
            _answer(c.seq, _FAILED, c.done, "writing the capture failed: %s" % _why(e))
            return
        finally:
            c.prof = c.unparsed = None  # frees torch's events
        _last_file = path
        try:
            _lib.proftop_capture_report(c.t0, c.t1, c.lo, c.hi, c.start_block, c.stop_block,
                                        wrote, c.tid, c.first_step)
        except Exception:  # noqa: BLE001
            pass
        _answer(c.seq, _DONE, c.done, "%s profiler, torch %s%s" % (
            c.mode, _torch.__version__, ", CUDA activity by torch" if c.cuda else ""))
    global _writer
    _writer = threading.Thread(target=run, name="proftop-capture", daemon=True)
    _writer.start()


def before_emit(ts):
    """At a boundary, before ts's step is recorded: when that step is the
    capture's last, stops the profiler first and returns the new end of the
    step (so the stop counts in the captured step), else None."""
    c = _cap
    if c is None or c.owner is not ts:
        return None
    try:
        w = _lib.proftop_control()
        cancel = (w >> 32) == c.seq and ((w >> 16) & 0xffff) & _CTL_CANCEL
        if c.done + 1 < c.steps and not cancel:
            return None
        return c.stop()
    except Exception as e:  # noqa: BLE001
        c.abandon()
        _drop(c, _FAILED, "torch.profiler failed while stopping: %s" % _why(e))
        return None


def _drop(c, state, msg):
    global _cap
    _cap = None
    c.prof = None
    _answer(c.seq, state, c.done, msg)


def _at_step(flags):
    """The step a request names (0: the next boundary)."""
    if not flags & _CTL_AT_STEP:
        return 0
    f = getattr(_lib, "proftop_control_at_step", None)
    return int(f()) if f is not None else 0


def boundary(ts, nsteps=0):
    """At a step boundary of ts's thread, after its step was recorded;
    nsteps: the steps recorded so far (the number of the one beginning)."""
    global _seen, _started, _pending
    w = _lib.proftop_control()
    c = _cap
    if c is not None and c.owner is ts:
        if c.t1:  # stopped by before_emit: this was the last step
            c.done += 1
            cancel = (w >> 32) == c.seq and ((w >> 16) & 0xffff) & _CTL_CANCEL
            if cancel and c.done < c.steps:
                _drop(c, _CANCELLED, "cancelled after %d of %d steps" % (c.done, c.steps))
            else:
                _finish(c)
        else:
            c.done += 1
            _answer(c.seq, _RUNNING, c.done)
    if w == _seen:
        p = _pending
        if p is not None and nsteps >= p[3] and _cap is None:
            with _lock:
                _pending = None
                _started = p[0]
                _begin(p[0], p[1], p[2], ts, nsteps)
        return
    seq, flags, steps = w >> 32, (w >> 16) & 0xffff, w & 0xffff
    if not seq or flags & _CTL_CANCEL:
        _seen = w
        if _pending is not None and _pending[0] == seq:
            _pending = None
        if _cap is None and seq and flags & _CTL_CANCEL and seq != _started:
            _answer(seq, _CANCELLED, 0, "cancelled before it started")
        return
    with _lock:
        if _cap is not None:
            # readers refuse a second one while one runs; one that raced in
            # waits (not marked seen) and starts at a boundary after it
            return
        _seen = w
        at = _at_step(flags)
        if at and nsteps > at:
            _started = seq
            _answer(seq, _FAILED, 0, "step %d had begun already: this rank is at step %d"
                    % (at, nsteps))
            return
        if at and nsteps < at:
            # the same steps on every rank: wait for the one asked for
            _pending = (seq, steps, flags, at)
            _answer(seq, _ACCEPTED, 0, "waiting for step %d (now at step %d)" % (at, nsteps))
            return
        _pending = None
        _started = seq
        _begin(seq, steps, flags, ts, nsteps)


def at_exit():
    """The job is exiting: a capture in progress is cancelled, nothing kept;
    one being written is finished first (30 s at most)."""
    global _pending
    p, _pending = _pending, None
    if p is not None:
        _answer(p[0], _CANCELLED, 0, "the job exited before step %d" % p[3])
    w = _writer
    if w is not None and w.is_alive():
        w.join(30.0)
    c = _cap
    if c is None:
        return
    c.abandon()
    _drop(c, _CANCELLED, "the job exited after %d of %d steps" % (c.done, c.steps))


def thread_ended(ts):
    """ts's thread ended: its capture cannot reach a step boundary again."""
    c = _cap
    if c is not None and c.owner is ts:
        c.abandon()
        _drop(c, _CANCELLED, "the stepping thread ended after %d of %d steps" % (c.done, c.steps))
