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
