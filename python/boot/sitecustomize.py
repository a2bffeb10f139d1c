# proftop's start-up hook for Python programs it launches (proftop run, record,
# serve): this directory is put first on PYTHONPATH, so Python's site module
# imports this file at start-up. It never imports torch: it adds a finder that
# notices `import torch` and, once torch has finished importing, installs
# proftop's zero-code helper (../proftop_auto.py). Then it runs the
# sitecustomize this one hides (the system's or a virtualenv's), so nothing
# the program relies on changes. Any failure here is silent and harmless: the
# program runs as it would without proftop. PROFTOP_TORCH=0 turns it off.
# Kept to syntax every Python 3 reads, since any python3 the job starts
# (however old) comes through here.


def _proftop_boot():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    pydir = os.path.dirname(here)

    def chain():
        """Runs the sitecustomize module this one shadows, if there is one."""
        try:
            import importlib.machinery
            import importlib.util
            path = [p for p in sys.path if os.path.abspath(p or ".") != here]
            spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
            if spec is None or spec.loader is None:
                return
            mod = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = mod
            spec.loader.exec_module(mod)
        except Exception:
            import traceback
            sys.stderr.write("Error in sitecustomize (run by proftop's hook):\n")
            traceback.print_exc()

    def load(name):
        """One of proftop's modules from pydir, without touching sys.path."""
        mod = sys.modules.get(name)
        if mod is not None:
            return mod
        import importlib.util
        spec = importlib.util.spec_from_file_location(name, os.path.join(pydir, name + ".py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        return mod

    def on_torch(torch):
        try:
            load("proftop")
            load("proftop_auto").install(torch)
        except Exception as e:
            try:
                sys.modules["proftop"].mark(
                    "proftop: the zero-code helper could not start: %s: %s"
                    % (type(e).__name__, e))
            except Exception:
                pass

    class ProftopTorchWatch(object):
        """A meta-path finder that only watches for torch, once."""

        def __init__(self):
            self.busy = False

        def find_spec(self, name, path=None, target=None):
            if name != "torch" or self.busy:
                return None
            self.busy = True
            try:
                import importlib.util
                spec = importlib.util.find_spec(name)
            except Exception:
                spec = None
            finally:
                self.busy = False
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            loader = getattr(spec, "loader", None)
            orig = getattr(loader, "exec_module", None)
            if orig is None:
                return None

            def exec_module(module):
                orig(module)
                on_torch(module)
            try:
                loader.exec_module = exec_module
            except Exception:
                return None
            return spec

    # multiprocessing's children (DataLoader workers started with 'spawn'
    # or 'forkserver', its resource tracker) mark no steps: the helper sees
    # them as such (proftop_auto._is_worker) and only times a DataLoader
    # worker's data stages, into the training process's session
    off = os.environ.get("PROFTOP_TORCH", "1") == "0" or \
        os.environ.get("PROFTOP_DISABLE", "") not in ("", "0")
    if not off and sys.version_info >= (3, 7):
        if "torch" in sys.modules:
            on_torch(sys.modules["torch"])
        else:
            sys.meta_path.insert(0, ProftopTorchWatch())
    chain()


try:
    _proftop_boot()
except Exception:
    pass
del _proftop_boot
