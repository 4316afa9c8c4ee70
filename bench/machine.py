"""What the benchmarks ask of the machine they run on and measure of it (shared by bench/run.py,
bench/sparse/run.py and bench/coo/run.py)."""
import os
import resource
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


def back_free_memory(nbytes=192 << 20):
    """Writes and frees `nbytes`, so that the next process's fresh pages are guest memory again.

    On a VM whose balloon device reports free pages to the host (virtio-balloon
    VIRTIO_BALLOON_F_REPORTING, as on the development VM), memory freed about 2 s ago has been
    handed back to the host, and the next first touch of each page costs a host fault besides
    the guest kernel's zeroing: `numpy.zeros((4096, 4096), 'f4').fill(1)` in a fresh process took
    11-14 ms back to back and 65-200 ms after 3 s idle. Every measurement allocates fresh memory
    (h5py's result arrays, HDF5's buffers), so that cost lands on the layouts at random. Called
    right before a measurement process starts, this makes its fresh pages cost what they cost on
    a machine without reporting (guest zeroing only), the same for every layout. It runs in the
    harness, so the measured process's peak RSS does not see it."""
    import numpy
    buf = numpy.ones(nbytes, dtype=numpy.uint8)  # every page written
    del buf  # munmap: the pages go back to the guest's free lists, reported only after a delay


def reset_peak_rss():
    """Makes the peak RSS the present RSS (Linux's clear_refs), so that what a call adds shows
    after work that peaked higher before it."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def peak_rss():
    """Peak RSS of this process, bytes. VmHWM, not ru_maxrss: ru_maxrss carries over the
    high-water mark of the (v)forked parent image across exec."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Quiet:
    """Before each measurement, waits (bounded) until other processes use under half a core:
    at most `wait` seconds per measurement and `budget` seconds in all; `busy` counts how many
    measurements still started under load (for the report)."""

    def __init__(self, wait=0.0, budget=0.0):
        self.wait_s = wait
        self.budget = budget
        self.busy = {"measurements": 0, "started_busy": 0, "waited_s": 0.0, "quiet_wait": wait}

    def wait(self):
        if self.wait_s <= 0:
            return
        start = time.time()
        while True:
            busy = cpu_busy(0.1)
            waited = time.time() - start
            if busy < 0.5 or waited >= self.wait_s or self.busy["waited_s"] + waited >= self.budget:
                break
            time.sleep(0.25)
        self.busy["measurements"] += 1
        self.busy["started_busy"] += busy >= 0.5
        self.busy["waited_s"] += time.time() - start


def busy_sentence(b):
    """One sentence on the load a Quiet's measurements met (its `busy`), or ''."""
    if not b.get("measurements"):
        return ""
    return (f"Other processes kept at least half a core busy at the start of {b['started_busy']} of "
            f"{b['measurements']} measurements (after waiting up to {b.get('quiet_wait', 0):g} s each for "
            f"quiet, {b['waited_s']:.0f} s in all).")
