"""Replaces itself (os.execv) with another Python running nested.py."""
import os
import sys
here = os.path.dirname(os.path.abspath(__file__))
print("execs: exec'ing nested.py", flush=True)
os.execv(sys.executable, [sys.executable, os.path.join(here, "nested.py"), "--steps", "20"])
