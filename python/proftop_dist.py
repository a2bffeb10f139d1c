"""proftop_dist.py - torch.distributed's collectives as the zero-code helper sees them.

proftop_auto.install() calls setup(); from then on, with no change to the
script, every call of a torch.distributed collective or point-to-point op
(all_reduce, all_gather, all_gather_into_tensor, reduce_scatter,
reduce_scatter_tensor, broadcast, reduce, all_to_all, all_to_all_single,
barrier, gather, scatter, send, recv, isend, irecv) is recorded with its op,
its process group, the group's sequence number (torch's own counter, read
before the call: every rank of the group numbers its calls alike), the bytes
of its input, its entry and its completion:

- a blocking call completes when it returns;
- an async one (async_op=True, isend/irecv) when its work completes (the
  work's future), on whatever thread that happens; the call itself shows as
  an operator "c10d::OP" on the calling thread;
- DistributedDataParallel's gradient buckets, which torch reduces from C++
  without passing through these functions, are recorded through a comm hook
  proftop registers at the model's first forward: the hook is torch's own
  default (divide by the group's size, all-reduce the bucket, same results).
  A model that registered a comm hook of its own keeps it; its buckets are
  then not recorded (one note says so). A job that registers its hook only
  after the model's first forward gets torch's "can only be called once"
  error, and under torch's Join context (uneven inputs) torch divides
  differently with a hook: PROFTOP_DDP_HOOK=0 turns the hook off.

FSDP (torch 2.x fully_shard) calls all_gather_single (all_gather_into_tensor
before torch 2.10) and reduce_scatter_single (reduce_scatter_tensor) through
torch.distributed, so its collectives are recorded too. Errors are the helper's own: counted by proftop_auto, never
raised; a collective's own exception passes through unchanged.
"""

import functools
import os
import threading

_lib = None
_fail = None
_torch = None
_c10d = None
_names = {}            # str -> interned id
_groups = {}           # id(pg) -> (pg, name id, size)
_own_seq = {}          # name id -> next number, where torch has no sequence number
_tls = threading.local()
_off = lambda: False  # noqa: E731  proftop_auto's _off, read at each call
_noted = set()
_note = None

# op -> (argument names: the tensor whose bytes count, the group), flags
_P2P = 2
_ASYNC = 1
_BUCKET = 4
OPS = {
    "all_reduce": ("tensor", 0),
    "all_gather": ("tensor", 0),
    "all_gather_into_tensor": ("input_tensor", 0),
    "all_gather_single": ("input_tensor", 0),          # torch 2.10+: what FSDP2 calls
    "all_gather_coalesced": ("input_tensor_list", 0),
    "_all_gather_base": ("input_tensor", 0),
    "reduce_scatter": ("input_list", 0),
    "reduce_scatter_tensor": ("input", 0),
    "reduce_scatter_single": ("input", 0),
    "all_reduce_coalesced": ("tensors", 0),
    "_reduce_scatter_base": ("input", 0),
    "broadcast": ("tensor", 0),
    "reduce": ("tensor", 0),
    "all_to_all": ("input_tensor_list", 0),
    "all_to_all_single": ("input", 0),
    "barrier": (None, 0),
    "gather": ("tensor", 0),
    "gather_into_tensor": ("tensor", 0),
    "gather_single": ("tensor", 0),
    "scatter": ("tensor", 0),
    "send": ("tensor", _P2P),
    "recv": ("tensor", _P2P),
    "isend": ("tensor", _P2P | _ASYNC),
    "irecv": ("tensor", _P2P | _ASYNC),
}


def _name(s):
    i = _names.get(s)
    if i is None:
        i = _names[s] = _lib.proftop_name(s.encode("utf-8", "replace"))
    return i


def _bytes(x):
    """Bytes of a tensor, or of a list of tensors."""
    if x is None:
        return 0
    if isinstance(x, (list, tuple)):
        return sum(_bytes(y) for y in x)
    try:
        return int(x.numel()) * int(x.element_size())
    except Exception:  # noqa: BLE001
        return 0


def _group_name(pg):
    c = _c10d
    f = getattr(c, "_get_process_group_name", None)
    if f is not None:
        try:
            return str(f(pg))
        except Exception:  # noqa: BLE001
            pass
    names = getattr(c, "_pg_names", None)
    if names is not None:
        try:
            return str(names[pg])
        except Exception:  # noqa: BLE001
            pass
    return getattr(pg, "group_name", None) or "?"


def _group(pg):
    """(pg, name id, size) of the call's group (None: the default)."""
    if pg is None:
        pg = getattr(getattr(_c10d, "_world", None), "default_pg", None)
        if pg is None:
            pg = getattr(getattr(_c10d, "GroupMember", None), "WORLD", None)
        if pg is None:
            return None
    g = _groups.get(id(pg))
    if g is None or g[0] is not pg:
        try:
            size = int(pg.size())
        except Exception:  # noqa: BLE001
            size = 0
        g = _groups[id(pg)] = (pg, _name(_group_name(pg)), size)
    return g


def _seq(g):
    """The group's sequence number of the call about to start."""
    try:
        return int(g[0]._get_sequence_number_for_group())
    except Exception:  # noqa: BLE001
        n = _own_seq.get(g[1], 0)
        _own_seq[g[1]] = n + 1
        return n


def _wrap(name, orig, tensor_arg, flags):
    import inspect
    try:
        params = list(inspect.signature(orig).parameters)
    except (TypeError, ValueError):
        return orig
    ti = params.index(tensor_arg) if tensor_arg in params else -1
    gi = params.index("group") if "group" in params else -1
    ai = params.index("async_op") if "async_op" in params else -1
    non_member = getattr(getattr(_c10d, "GroupMember", None), "NON_GROUP_MEMBER", object())

    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        if _off() or getattr(_tls, "inside", False):
            return orig(*args, **kwargs)
        rec = None
        try:
            pg = kwargs.get("group") if "group" in kwargs else (
                args[gi] if 0 <= gi < len(args) else None)
            if pg is not non_member:
                g = _group(pg)
                if g is not None:
                    fl = flags
                    if kwargs.get("async_op") or (0 <= ai < len(args) and args[ai]):
                        fl |= _ASYNC
                    if getattr(_tls, "bucket", False):
                        fl |= _BUCKET
                    t = kwargs.get(tensor_arg) if tensor_arg in kwargs else (
                        args[ti] if 0 <= ti < len(args) else None)
                    rec = (_name(name), g[1], _seq(g), _bytes(t), g[2], fl)
                    _lib.proftop_coll_enter(*rec)
                    start = _lib.proftop_now()
        except Exception as e:  # noqa: BLE001
            _fail(e)
            rec = None
        pushed = False
        if rec is not None and rec[5] & _ASYNC:
            # an async call: its launch is an operator here, its row runs on
            try:
                _lib.proftop_op_push_id(_name("c10d::" + name))
                pushed = True
            except Exception as e:  # noqa: BLE001
                _fail(e)
        _tls.inside = True
        try:
            out = orig(*args, **kwargs)
        finally:
            _tls.inside = False
            if pushed:
                _lib.proftop_op_pop()
        if rec is not None:
            try:
                if rec[5] & _ASYNC and out is not None:
                    _on_complete(out, rec, start)
                else:
                    _lib.proftop_coll_done(rec[0], rec[1], rec[2], start, rec[3], rec[4], rec[5])
            except Exception as e:  # noqa: BLE001
                _fail(e)
        return out
    wrapper.__proftop_wrapped__ = True
    return wrapper


def _on_complete(work, rec, start):
    """Records rec's completion when work's future completes (else now)."""
    fut = None
    try:
        fut = work.get_future()
    except Exception:  # noqa: BLE001
        fut = None
    if fut is None:
        _lib.proftop_coll_done(rec[0], rec[1], rec[2], start, rec[3], rec[4], rec[5])
        return

    def done(_f):
        try:
            _lib.proftop_coll_done(rec[0], rec[1], rec[2], start, rec[3], rec[4], rec[5])
        except Exception as e:  # noqa: BLE001
            _fail(e)
    add = getattr(fut, "add_done_callback", None)
    if add is not None:
        add(done)
    else:
        fut.then(done)


# ---- DistributedDataParallel's buckets

def _ddp_hook(pg, bucket):
    """torch's default all-reduce comm hook (default_hooks.allreduce_hook),
    through the wrapped all_reduce, so each bucket is recorded."""
    dist = _torch.distributed
    group = pg if pg is not None else _group(None)[0]
    t = bucket.buffer()
    t.div_(group.size())
    _tls.bucket = True
    try:
        work = dist.all_reduce(t, group=group, async_op=True)
    finally:
        _tls.bucket = False
    return work.get_future().then(lambda fut: fut.value()[0])


def _wrap_ddp(ddp):
    """DDP.forward registers the hook at a model's first forward; the job's
    own register_comm_hook, before that, keeps its hook."""
    fwd = ddp.__dict__.get("forward")
    reg = ddp.__dict__.get("register_comm_hook")
    breg = ddp.__dict__.get("_register_builtin_comm_hook")
    if fwd is None or getattr(fwd, "__proftop_wrapped__", False):
        return

    def own_hook(orig):
        @functools.wraps(orig)
        def w(self, *a, **k):
            self.__dict__["_proftop_own_hook"] = True
            return orig(self, *a, **k)
        return w
    if reg is not None:
        ddp.register_comm_hook = own_hook(reg)
    if breg is not None:
        ddp._register_builtin_comm_hook = own_hook(breg)

    @functools.wraps(fwd)
    def forward(self, *a, **k):
        d = self.__dict__
        if "_proftop_hook" not in d:
            d["_proftop_hook"] = False
            try:
                if not _off() and os.environ.get("PROFTOP_DDP_HOOK", "1") != "0":
                    if d.get("_proftop_own_hook") or getattr(self, "_comm_hooks", None):
                        _say("proftop: DistributedDataParallel's gradient all-reduces are not "
                             "recorded: the job registered a comm hook of its own")
                    elif getattr(self, "process_group", None) is None:
                        # the group the reducer uses is not known: reducing over
                        # another one would change the results; no hook
                        _say("proftop: DistributedDataParallel's gradient all-reduces are not "
                             "recorded: its process group is not known to this torch")
                    else:
                        # the reducer takes the group it was made with
                        reg_orig = reg if reg is not None else type(self).register_comm_hook
                        reg_orig(self, getattr(self, "process_group", None), _ddp_hook)
                        d["_proftop_hook"] = True
            except Exception as e:  # noqa: BLE001
                _fail(e)
        return fwd(self, *a, **k)
    forward.__proftop_wrapped__ = True
    ddp.forward = forward


def _say(text):
    if text in _noted:
        return
    _noted.add(text)
    try:
        _lib.proftop_mark(text.encode("utf-8", "replace"))
    except Exception:  # noqa: BLE001
        pass


def setup(lib, torch, fail, off):
    """Wraps torch.distributed's collectives; True when it did."""
    global _lib, _torch, _c10d, _fail, _off
    if not hasattr(lib, "proftop_coll_enter") or not hasattr(lib, "proftop_now"):
        return False
    dist = getattr(torch, "distributed", None)
    if dist is None or not getattr(dist, "is_available", lambda: False)():
        return False
    c10d = getattr(dist, "distributed_c10d", None)
    if c10d is None:
        return False
    _lib, _torch, _c10d, _fail, _off = lib, torch, c10d, fail, off
    for name, (targ, flags) in OPS.items():
        orig = getattr(c10d, name, None)
        if orig is None or getattr(orig, "__proftop_wrapped__", False):
            continue
        w = _wrap(name, orig, targ, flags)
        setattr(c10d, name, w)
        if getattr(dist, name, None) is orig:
            setattr(dist, name, w)
    ddp = getattr(getattr(torch.nn, "parallel", None), "DistributedDataParallel", None)
    if isinstance(ddp, type):
        _wrap_ddp(ddp)
    destroy = getattr(c10d, "destroy_process_group", None)
    if destroy is not None and not getattr(destroy, "__proftop_wrapped__", False):
        @functools.wraps(destroy)
        def destroy_pg(*a, **k):
            _groups.clear()
            return destroy(*a, **k)
        destroy_pg.__proftop_wrapped__ = True
        c10d.destroy_process_group = destroy_pg
        if getattr(dist, "destroy_process_group", None) is destroy:
            dist.destroy_process_group = destroy_pg
    return True
