"""A plain Python program that never imports torch: it computes for a while."""
import time
t = time.perf_counter()
n = 0
while time.perf_counter() - t < 0.5:
    n += sum(range(1000))
print("RESULT done n=%d" % n)
