"""A distributed job without torch, for the collective and cluster tests: N
rank processes whose collectives are a real barrier (each rank marks its
arrival in a shared folder and waits for the others), recorded through
the probe's collective entry points as proftop's Python helper records
torch.distributed's calls (ctypes, python/proftop.py).

  fake_ranks.py --ranks N --dir D [--steps S] [--late-rank R --late-ms M]
                [--hang-rank H --hang-at K --hang-s X] [--first-rank F]
                [--die-rank R --die-at K]

Started without RANK it starts N ranks (RANK = F..F+N-1, WORLD_SIZE from
--world, default N) and waits for them; each rank runs S steps: its
data loading (2 ms; rank R busy M ms more; rank H, at step K, sleeps X s
there and prints "HANG rank=H t_ns=T", time.monotonic_ns()), then one
all_reduce (group "0", seq = the step) and its forward (1 ms). Ranks of
several launches meet in one folder (one launch per node), by rank
number. Rank --die-rank leaves (os._exit(3), no exit handlers) in its
data loading at step --die-at; the others then wait for it for good. Ends with "RESULT rank=R steps=S"."""
import argparse
import os
import signal
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
import proftop  # noqa: E402


_parent = os.getppid()


def orphaned():
    """The launcher is gone (killed): a rank never outlives it."""
    if os.getppid() != _parent:
        sys.exit(1)


def barrier(d, seq, rank, world):
    open(os.path.join(d, "%d.%d" % (seq, rank)), "w").close()
    i = 0
    while True:
        n = sum(os.path.exists(os.path.join(d, "%d.%d" % (seq, r))) for r in range(world))
        if n == world:
            return
        time.sleep(0.0005)
        i += 1
        if i % 200 == 0:
            orphaned()


def rank_main(a, rank, world):
    lib = proftop.lib()
    op = lib.proftop_name(b"all_reduce") if lib else 0
    grp = lib.proftop_name(b"0") if lib else 0
    for step in range(a.steps):
        with proftop.phase("dataloader"):
            time.sleep(0.002)
            if rank == a.late_rank:
                end = time.monotonic() + a.late_ms / 1000.0
                while time.monotonic() < end:
                    pass
            if rank == a.die_rank and step == a.die_at:
                print("DIE rank=%d t_ns=%d" % (rank, time.monotonic_ns()), flush=True)
                os._exit(3)
            if rank == a.hang_rank and step == a.hang_at:
                print("HANG rank=%d t_ns=%d" % (rank, time.monotonic_ns()), flush=True)
                end = time.monotonic() + a.hang_s
                while time.monotonic() < end:
                    time.sleep(0.1)
                    orphaned()
        if lib:
            lib.proftop_coll_enter(op, grp, step, 4096, world, 0)
            t0 = lib.proftop_now()
        barrier(a.dir, step, rank, world)
        if lib:
            lib.proftop_coll_done(op, grp, step, t0, 4096, world, 0)
        with proftop.phase("forward"):
            time.sleep(0.001)
        proftop.step(8)
    print("RESULT rank=%d steps=%d" % (rank, a.steps), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--world", type=int, default=0)
    ap.add_argument("--first-rank", type=int, default=0)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--late-rank", type=int, default=-1)
    ap.add_argument("--late-ms", type=float, default=0.0)
    ap.add_argument("--hang-rank", type=int, default=-1)
    ap.add_argument("--hang-at", type=int, default=-1)
    ap.add_argument("--hang-s", type=float, default=0.0)
    ap.add_argument("--die-rank", type=int, default=-1)
    ap.add_argument("--die-at", type=int, default=-1)
    a = ap.parse_args()
    world = a.world or a.ranks
    if "RANK" in os.environ:
        rank_main(a, int(os.environ["RANK"]), world)
        return
    os.makedirs(a.dir, exist_ok=True)
    kids = []

    def end(sig, frame):
        # the launcher's end is its ranks' end (and they look for it: orphaned())
        for k in kids:
            try:
                k.terminate()
            except OSError:
                pass
        os._exit(128 + sig)
    signal.signal(signal.SIGINT, end)
    signal.signal(signal.SIGTERM, end)
    for r in range(a.first_rank, a.first_rank + a.ranks):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(world), LOCAL_RANK=str(r - a.first_rank))
        kids.append(subprocess.Popen([sys.executable] + sys.argv, env=env))
    sys.exit(max(k.wait() for k in kids))


if __name__ == "__main__":
    main()
