"""proftop_data.py - the zero-code helper's data pipeline: the stages of
making a batch and the loader's queue (the comment below), in the training
process and in DataLoader workers.

Loaded by proftop_auto, which owns the state every part shares; names of
the other parts through their modules: _a (proftop_auto).
"""

import functools
import sys
import threading

_a = None  # set by proftop_auto when it loads this module


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

_forked = False       # this process is a fork of the one the helper was installed in
_dp_ids = {}          # stage text -> name id
_dp_cls_ids = {}      # dataset class -> its __getitem__ stage id
_dp_tf_ids = {}       # transform class (or function name) -> stage id
_dp_patched = set()   # classes whose methods are wrapped
_dp_tls = threading.local()


def _stage_id(text):
    i = _dp_ids.get(text)
    if i is None:
        i = _dp_ids[text] = _a._lib.proftop_name(("data: " + text).encode("utf-8", "replace"))
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
        if not _a._dp_on:
            return orig(self, idx)
        _a._ncalls += 1
        try:
            _a._lib.proftop_range_push_id(_getitem_id(self))
        except Exception as e:  # noqa: BLE001
            _a._fail(e)
            return orig(self, idx)
        try:
            return orig(self, idx)
        finally:
            _a._lib.proftop_range_pop()
    slow = functools.wraps(orig)(__getitem__)
    if _a._fast_on:
        return _a._fast.timed(orig, slow, _dp_cls_ids)  # the class's id there, else slow names it
    return slow


def _wrap_compose_call(orig):
    """torchvision's Compose (transforms v1) calls each transform in turn:
    the same loop, each call a stage named by the transform's class."""
    def __call__(self, img):
        tfs = getattr(self, "transforms", None)
        if not _a._dp_on or type(tfs) is not list:
            return orig(self, img)
        _a._ncalls += 1
        for t in tfs:
            try:
                _a._lib.proftop_range_push_id(_tf_id(t))
            except Exception as e:  # noqa: BLE001
                _a._fail(e)
                img = t(img)
                continue
            try:
                img = t(img)
            finally:
                _a._lib.proftop_range_pop()
        return img
    slow = functools.wraps(orig)(__call__)
    if _a._fast_on:
        return _a._fast.compose(orig, slow, _dp_tf_ids, _tf_id)
    return slow


def _timed(fn, sid, text=None):
    def stage(*args, **kwargs):
        if not _a._dp_on:
            return fn(*args, **kwargs)
        _a._lib.proftop_range_push_id(sid)
        try:
            return fn(*args, **kwargs)
        finally:
            _a._lib.proftop_range_pop()
    if _a._fast_on and text is not None:
        return _a._fast.stage(fn, stage, _dp_ids, (text, None))  # in C, the same
    return stage


def _wrap_fetch(orig):
    """A fetcher's fetch() makes one batch: the stage "batch"; on its first
    call the fetcher's collate_fn is timed too (on this instance only)."""
    def fetch(self, possibly_batched_index):
        if not _a._dp_on:
            return orig(self, possibly_batched_index)
        try:
            if not getattr(self, "_proftop_timed", False):
                self._proftop_timed = True
                cf = getattr(self, "collate_fn", None)
                if cf is not None:
                    self.collate_fn = _timed(cf, _stage_id("collate_fn"), "collate_fn")
            _a._lib.proftop_range_push_id(_stage_id("batch"))
        except Exception as e:  # noqa: BLE001
            _a._fail(e)
            return orig(self, possibly_batched_index)
        try:
            return orig(self, possibly_batched_index)
        finally:
            _a._lib.proftop_range_pop()
    fetch = functools.wraps(orig)(fetch)
    if _a._fast_on:
        # in C once the instance's collate_fn is timed (this function does that)
        return _a._fast.stage(orig, fetch, _dp_ids, ("batch", "_proftop_timed"))
    return fetch


def _wrap_pin(orig):
    """pin_memory() recurses into containers: only the outermost call is a stage."""
    def pin_memory(data, *args, **kwargs):
        if not _a._dp_on or getattr(_dp_tls, "pinning", False):
            return orig(data, *args, **kwargs)
        _dp_tls.pinning = True
        try:
            _a._lib.proftop_range_push_id(_stage_id("pin_memory"))
        except Exception as e:  # noqa: BLE001
            _dp_tls.pinning = False
            _a._fail(e)
            return orig(data, *args, **kwargs)
        try:
            return orig(data, *args, **kwargs)
        finally:
            _a._lib.proftop_range_pop()
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
            _a._lib.proftop_counter(b"Dataloader queue capacity", float(cap))
    v = 0 if getattr(it, "_proftop_waited", False) else max(ready, 1)
    _a._lib.proftop_counter(b"Dataloader queue", float(v))


def _wrap_next(inner):
    def __next__(self):
        ready = None
        if _a._dp_on:
            try:
                ready = _queue_ready(self)
                if ready is not None:
                    self._proftop_waited = False
            except Exception as e:  # noqa: BLE001
                _a._fail(e)
        if ready is None:
            return inner(self)
        try:
            return inner(self)
        finally:
            try:
                _queue_emit(self, ready)
            except Exception as e:  # noqa: BLE001
                _a._fail(e)
    return functools.wraps(inner)(__next__)


def _wrap_try_get(orig):
    """A multi-worker iterator asks its data queue for a batch: with nothing
    in it, the training waits (the batch it needs next is not there)."""
    def _try_get_data(self, *args, **kwargs):
        if _a._dp_on and getattr(self, "_proftop_waited", None) is False:
            try:
                if self._data_queue.qsize() == 0:
                    self._proftop_waited = True
            except Exception:  # noqa: BLE001 - no qsize: the figure stays as counted
                pass
        return orig(self, *args, **kwargs)
    return functools.wraps(orig)(_try_get_data)


def _wrap_iter(inner):
    def __iter__(self):
        if _a._dp_on:
            try:
                _dp_prepare(self)
            except Exception as e:  # noqa: BLE001
                _a._fail(e)
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
                _a._fail(e)
        try:
            return orig(*args, **kwargs)
        finally:
            if attached:
                _worker_detach()
    return functools.wraps(orig)(_worker_loop)


def _worker_attach(wid):
    if _a._lib is None:
        return False
    label = ("data worker" if not isinstance(wid, int) else "data worker %d" % wid).encode()[:15]
    if _forked:
        f = getattr(_a._lib, "proftop_worker_attach", None)
        if f is None or f(label) != 1:
            return False
    else:
        # spawn / forkserver: the process that made the loader is the parent
        # multiprocessing names (a forkserver's child's OS parent is the server)
        f = getattr(_a._lib, "proftop_worker_attach_pid", None)
        mp = sys.modules.get("multiprocessing")
        parent = mp.parent_process() if mp is not None else None
        if f is None or parent is None or not parent.pid or f(int(parent.pid), label) != 1:
            return False
        _dp_ids.clear()  # interned (if at all) in this process's own session
        _dp_cls_ids.clear()
        _dp_tf_ids.clear()
    _a._dp_on = True
    return True


def _worker_detach():
    _a._dp_on = False
    try:
        _a._lib.proftop_worker_detach()
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
