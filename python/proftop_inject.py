# proftop_inject.py - run inside a Python job that was not started under
# proftop, by `proftop -p PID --inject` (gdb's pending call, or PEP 768's
# sys.remote_exec). It is exec'd with PROFTOP_DIR, a private directory that
# holds its arguments (args: lib=, session_dir=, pydir=) and gets its answer
# (status: "ok: ..." or "error: ..."). It loads libproftop.so (the probe's
# constructor opens this process's session in session_dir), then the
# zero-code helper, attached: steps start at the next step boundary. If torch
# is not imported yet, the helper installs when it is. Nothing here may raise
# into the job: every failure becomes the status line.


def _proftop_inject(d):
    import os
    import sys

    def answer(text):
        tmp = os.path.join(d, ".status.tmp")
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.rename(tmp, os.path.join(d, "status"))

    try:
        args = {}
        with open(os.path.join(d, "args")) as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition("=")
                args[k] = v
        import ctypes
        import importlib.util
        old = os.environ.get("PROFTOP_SESSION_DIR")
        os.environ["PROFTOP_SESSION_DIR"] = args["session_dir"]
        try:
            ctypes.CDLL(args["lib"], mode=ctypes.RTLD_GLOBAL)
        finally:
            if old is None:
                del os.environ["PROFTOP_SESSION_DIR"]
            else:
                os.environ["PROFTOP_SESSION_DIR"] = old

        def load(name):
            mod = sys.modules.get(name)
            if mod is None:
                spec = importlib.util.spec_from_file_location(
                    name, os.path.join(args["pydir"], name + ".py"))
                mod = importlib.util.module_from_spec(spec)
                sys.modules[name] = mod
                spec.loader.exec_module(mod)
            return mod

        proftop = load("proftop")
        proftop.load()
        if not proftop.enabled():
            answer("error: the probe loaded but records nothing (PROFTOP_DISABLE set in the "
                   "job, or no session could be created: see the job's stderr)")
            return
        auto = load("proftop_auto")
        torch = sys.modules.get("torch")
        if torch is not None and getattr(getattr(torch, "__spec__", None), "_initializing",
                                         False):
            # the job is importing torch right now (this runs between two of
            # its bytecodes): installing would import torch's submodules in
            # the middle of it, and another thread would race the main one's
            # imports. A profile function of the main thread's waits for the
            # first event after torch's import ended, installs, and goes.
            if sys.getprofile() is not None:
                answer("error: the job is importing torch and runs a profiler of its own; "
                       "attach again once the import is done")
                return

            def prof(frame, event, arg):
                if getattr(torch.__spec__, "_initializing", False):
                    return
                sys.setprofile(None)
                try:
                    auto.install(torch, attach=True)
                except Exception as e:  # noqa: BLE001 - said where the user looks
                    try:
                        proftop.mark("proftop: the helper could not start after torch's "
                                     "import: %s: %s" % (type(e).__name__, e))
                    except Exception:  # noqa: BLE001
                        pass
            sys.setprofile(prof)
            answer("ok: torch is being imported; the helper starts when the import is done")
        elif torch is not None and hasattr(torch, "nn"):
            st = auto.install(torch, attach=True)
            answer("ok: zero-code helper %s; steps start at the next step boundary" % st)
        else:
            answer("ok: torch is not imported yet; the helper starts when it is "
                   "(proftop_auto.watch)" if auto.watch() else
                   "ok: probe loaded; torch is not imported and cannot be watched")
    except BaseException as e:  # noqa: BLE001 - never into the job
        try:
            answer("error: %s: %s" % (type(e).__name__, e))
        except BaseException:
            pass


_proftop_inject(PROFTOP_DIR)  # noqa: F821 - given by the bootstrap
del _proftop_inject
