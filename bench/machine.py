"""What the benchmarks ask of the machine they run on (shared by bench/run.py and bench/sparse/run.py)."""
import os
import time


def cpu_busy(interval=0.5):
    """Cores kept busy by other processes over `interval` seconds (we run nothing meanwhile)."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        return sum(v), v[3] + v[4]
    t1, i1 = snap()
    time.sleep(interval)
    t2, i2 = snap()
    return ((t2 - t1) - (i2 - i1)) / max(t2 - t1, 1) * (os.cpu_count() or 1)
