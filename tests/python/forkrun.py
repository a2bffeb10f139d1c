"""tests/python/forkrun.py - runs the helper tests' scenarios (a program
given as text, run as `python -c PROG`) in processes forked from one that
has already imported torch, instead of a fresh interpreter each: the
scenarios' programs begin by importing torch (seconds, each time) and only
then the helper, so the child starts where a fresh interpreter would be
after that import line. Every other part is a process of its own as before:
its environment, argv, __main__, stdout and stderr, exit status, and a
normal interpreter exit (atexit handlers, threads joined).

run(prog, env, argv=(), timeout=120) -> (rc, stdout, stderr), like
subprocess.run([sys.executable, "-c", prog] + argv, env=env). The server
starts on first use, one per test process; PT_TEST_FRESH=1 (or a server
that cannot start) runs each scenario in a fresh interpreter instead.
"""
import atexit
import json
import os
import subprocess
import sys
import tempfile

SERVER = r"""
import io, json, os, signal, sys, time, traceback, types
import torch  # the import every scenario starts with
from torch import nn  # noqa: F401
proto_in = os.fdopen(os.dup(0), "r")
proto_out = os.fdopen(os.dup(1), "w")
null = os.open(os.devnull, os.O_RDONLY)
os.dup2(null, 0)

def child(req):
    os.environ.clear()
    os.environ.update(req["env"])
    for fd, path in ((1, req["out"]), (2, req["err"])):
        f = os.open(path, os.O_WRONLY | os.O_TRUNC)
        os.dup2(f, fd)
        os.close(f)
    proto_in.close()
    proto_out.close()
    sys.argv = ["-c"] + req["argv"]
    if hasattr(sys, "orig_argv"):
        sys.orig_argv = [sys.executable, "-c", req["prog"]] + req["argv"]
    main = types.ModuleType("__main__")
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    try:
        exec(compile(req["prog"], "<string>", "exec"), main.__dict__)
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        raise SystemExit(1)
    raise SystemExit(0)

for line in proto_in:
    req = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        child(req)  # never returns: the child exits as an interpreter does
    end = time.monotonic() + req["timeout"]
    while True:
        got, st = os.waitpid(pid, os.WNOHANG)
        if got:
            rc = os.waitstatus_to_exitcode(st)
            break
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            rc = -9
            break
        time.sleep(0.005)
    proto_out.write(json.dumps({"rc": rc}) + "\n")
    proto_out.flush()
"""

_server = None
_tmp = None


def _stop():
    global _server
    s, _server = _server, None
    if s is not None:
        try:
            s.stdin.close()
            s.wait(timeout=30)
        except Exception:  # noqa: BLE001
            s.kill()
            s.wait()


def _start():
    global _server, _tmp
    if os.environ.get("PT_TEST_FRESH") == "1":
        return None
    if _server is None:
        _tmp = tempfile.mkdtemp(prefix="proftop-forkrun.")
        atexit.register(lambda: __import__("shutil").rmtree(_tmp, True))
        _server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True)
        atexit.register(_stop)
    return _server


def _fresh(prog, env, argv, timeout):
    r = subprocess.run([sys.executable, "-c", prog] + list(argv), env=env, capture_output=True,
                       text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def run(prog, env, argv=(), timeout=120):
    s = _start()
    if s is None or s.poll() is not None:
        return _fresh(prog, env, argv, timeout)
    out = os.path.join(_tmp, "out")
    err = os.path.join(_tmp, "err")
    for p in (out, err):
        open(p, "w").close()
    s.stdin.write(json.dumps({"env": dict(env), "argv": list(argv), "prog": prog,
                              "out": out, "err": err, "timeout": timeout}) + "\n")
    s.stdin.flush()
    line = s.stdout.readline()
    if not line:  # the server died: this scenario and the rest run fresh
        return _fresh(prog, env, argv, timeout)
    rc = json.loads(line)["rc"]
    with open(out, errors="replace") as f:
        o = f.read()
    with open(err, errors="replace") as f:
        e = f.read()
    return rc, o, e
