"""Runs another script (runpy) with torch's import held up in its middle: the
import of torch.functional, which torch/__init__ makes, waits --hold seconds
after writing --marker. An attach made then finds torch half-imported.

  python3 slow_import.py --marker F --hold 3 -- script.py ARGS..."""
import argparse
import runpy
import sys
import time


class _Hold(object):
    def __init__(self, marker, hold):
        self.marker, self.hold = marker, hold

    def find_spec(self, name, path=None, target=None):
        if name == "torch.functional":
            sys.meta_path.remove(self)
            with open(self.marker, "w") as f:
                f.write("importing torch\n")
            time.sleep(self.hold)
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--marker", required=True)
    ap.add_argument("--hold", type=float, default=3.0)
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    sys.meta_path.insert(0, _Hold(a.marker, a.hold))
    sys.argv = [a.script] + a.args
    runpy.run_path(a.script, run_name="__main__")


if __name__ == "__main__":
    main()
