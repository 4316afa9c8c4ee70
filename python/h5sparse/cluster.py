"""Writes from a dask cluster without MPI. HDF5 allows one writer per file, but the format needs
no HDF5 to make a chunk: the workers turn the array's blocks into the dataset's finished
structured chunks (h5sparse_encode_coo, with the dataset's pipelines and chunk grid), and this
process, the only one with the file open, stores their bytes with direct chunk writes as they
arrive, a bounded number of blocks in flight. docs/DESIGN.md ("Writes from a cluster") says
what that costs and where it stops scaling."""
import bisect
import contextlib
import ctypes
import functools
import itertools
import os

import numpy as np

from ._calls import H5SparseError, _error_text, guarded

_MAX_RANK = 32  # H5S_MAX_RANK
_MESSAGE_BYTES = 1024


class _ChunkBytes(ctypes.Structure):  # h5sparse_chunk_bytes_t
    _fields_ = [("offset", ctypes.c_uint64 * _MAX_RANK), ("filter_mask", ctypes.c_uint32),
                ("size", ctypes.c_size_t), ("buf", ctypes.c_void_p)]


_CHUNK_OP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_ChunkBytes), ctypes.c_void_p)


def _encoder():
    from . import library
    lib = library()
    f = lib.h5sparse_encode_coo
    if not getattr(f, "argtypes", None):
        size, ptr = ctypes.c_size_t, ctypes.c_void_p
        f.argtypes = [size, ptr, ctypes.c_int, ptr, ctypes.c_bool, size, ptr, ptr, size, ptr, _CHUNK_OP, ptr,
                      ctypes.c_char_p, size]
        f.restype = ctypes.c_int
    return f


class _Target:
    """What a worker needs of the dataset: no HDF5 object, so that it pickles."""

    def __init__(self, dset, offset):
        from ._libhdf5 import filter_values
        from .interop import _fill_value
        from . import FILTER_ID
        self.name = dset.name
        self.cd_values = filter_values(dset.id.get_create_plist(), FILTER_ID)
        self.dims = tuple(int(n) for n in dset.shape)
        self.chunks = tuple(int(c) for c in dset.chunks)
        self.dtype = dset.dtype
        self.file_type = dset.id.get_type().encode()
        self.fill = np.asarray(_fill_value(dset), dset.dtype)
        self.moves_rewritten = bool(dset.file.swmr_mode)
        self.offset = tuple(int(o) for o in offset)


# ---- On the workers -------------------------------------------------------------------------

def _block_elements(target, block, shape):
    """(coords (N, rank) int64 in the block, values) of the elements a block defines: the stored
    entries of a sparse block, the elements of a dense block other than the fill value."""
    import scipy.sparse
    if tuple(block.shape) != shape:
        raise ValueError(f"a block of shape {tuple(block.shape)} came where the array's chunks give {shape}")
    if scipy.sparse.issparse(block):
        coo = scipy.sparse.coo_array(block)
        coo.sum_duplicates()  # as scipy itself sums them
        return np.stack([coo.row, coo.col], axis=1).astype(np.int64), coo.data
    if hasattr(block, "fill_value") and hasattr(block, "nnz"):  # pydata sparse, any format
        import sparse
        coo = sparse.as_coo(block)
        if not _same_value(coo.fill_value, target.fill, target.dtype):
            raise ValueError(f"a block's fill value {coo.fill_value!r} differs from {target.name}'s "
                             f"{target.fill[()]!r}")
        return coo.coords.T.astype(np.int64), coo.data
    dense = np.asarray(block)
    defined = ~_equals_fill(dense, target.fill)
    return np.argwhere(defined), dense[defined]


def _same_value(a, b, dtype):
    a, b = np.asarray(a, dtype), np.asarray(b, dtype)
    return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def _equals_fill(dense, fill):
    if fill.dtype.kind in "fc" and np.isnan(fill):
        return np.isnan(dense)
    return dense == fill


def _in_file_type(target, values):
    """The values in the dataset's file datatype, converted as H5Dwrite converts them."""
    import h5py
    values = np.ascontiguousarray(values)
    if values.dtype == target.dtype:
        return values
    dst = h5py.h5t.decode(target.file_type)
    try:
        src = h5py.h5t.py_create(values.dtype, logical=True)
        width = max(values.dtype.itemsize, dst.get_size())
        buf = np.zeros(len(values) * width, np.uint8)
        buf[:values.nbytes] = values.view(np.uint8).ravel()
        h5py.h5t.convert(src, dst, len(values), buf)
    except (TypeError, ValueError, RuntimeError) as e:
        raise TypeError(f"values of type {values.dtype} do not convert to {target.name}'s {target.dtype}: {e}") from None
    return buf[:len(values) * dst.get_size()].view(target.dtype)


def _encode(target, coords, values, stored):
    """The chunks writing the elements stores over `stored` ((offset, filter mask, bytes) of
    the chunks they may touch): [(offset, bytes)] in row-major order."""
    rank = len(target.dims)
    coords = np.ascontiguousarray(coords, dtype=np.uint64)
    cd = (ctypes.c_uint * len(target.cd_values))(*target.cd_values)
    dims = (ctypes.c_uint64 * rank)(*target.dims)
    carried = (_ChunkBytes * max(1, len(stored)))()
    for c, (offset, mask, data) in zip(carried, stored):
        c.offset[:rank] = offset
        c.filter_mask, c.size = mask, len(data)
        c.buf = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p)
    out = []

    def take(chunk, _data):
        c = chunk.contents
        out.append((tuple(c.offset[:rank]), ctypes.string_at(c.buf, c.size)))
        return 0

    message = ctypes.create_string_buffer(_MESSAGE_BYTES)
    # No HDF5 call is made (the message takes a failure), so no lock is held: threads encode at once.
    rc = _encoder()(len(target.cd_values), cd, rank, dims, target.moves_rewritten, len(coords), coords.ctypes.data,
                    values.ctypes.data, len(stored), carried, _CHUNK_OP(take), None, message, _MESSAGE_BYTES)
    if rc < 0:
        raise H5SparseError(f"encoding chunks of {target.name} failed: {message.value.decode(errors='replace')}")
    return out


# ---- In the writing process -----------------------------------------------------------------

def _sizes_aligned(sizes, first, chunk):
    """True when every boundary between blocks (dataset coordinates) falls on a chunk's."""
    return all(b % chunk == 0 for b in itertools.accumulate(sizes[:-1], initial=first) if b != first)


def _aligned_sizes(n, first, chunk, typical):
    """Block sizes covering [first, first + n) whose boundaries fall on every k-th chunk
    boundary, k chunks about a typical block."""
    step = chunk * max(1, round(typical / chunk))
    cuts = list(range((first // step + 1) * step, first + n, step))
    edges = [first] + cuts + [first + n]
    return tuple(b - a for a, b in zip(edges[:-1], edges[1:]))


def _aligned(array, target):
    """The array with blocks whose boundaries fall on chunk boundaries (rechunked by dask, on the
    workers, when they do not), so that each chunk comes from one block."""
    if any(np.isnan(s) for sizes in array.chunks for s in sizes):
        raise ValueError("the array's block sizes are unknown: call array.compute_chunk_sizes() first")
    if all(_sizes_aligned(sizes, o, c) for sizes, o, c in zip(array.chunks, target.offset, target.chunks)):
        return array
    return array.rechunk(tuple(_aligned_sizes(n, o, c, max(sizes))
                               for n, o, c, sizes in zip(array.shape, target.offset, target.chunks, array.chunks)))


class _Blocks:
    """The array's blocks: where each starts in the dataset, and which stored chunks it meets."""

    def __init__(self, array, target, dset):
        self.starts = [tuple(itertools.accumulate(sizes[:-1], initial=o)) for sizes, o in
                       zip(array.chunks, target.offset)]
        self.sizes = array.chunks
        self.chunks = target.chunks
        self.stored = {}  # block index: offsets of the stored chunks it meets
        dset.id.chunk_iter(self._note)

    def _note(self, info):
        index = []
        for o, starts, sizes, c in zip(info.chunk_offset, self.starts, self.sizes, self.chunks):
            if o + c <= starts[0] or o >= starts[-1] + sizes[-1]:
                return  # the chunk is outside the array's box
            index.append(max(0, bisect.bisect_right(starts, o) - 1))
        self.stored.setdefault(tuple(index), []).append(tuple(int(o) for o in info.chunk_offset))

    def start(self, index):
        return tuple(s[i] for s, i in zip(self.starts, index))

    def shape(self, index):
        return tuple(int(s[i]) for s, i in zip(self.sizes, index))


def _check_fits(array, target):
    if array.ndim != len(target.dims):
        raise ValueError(f"a {array.ndim}-D array cannot be written into the {len(target.dims)}-D {target.name}")
    end = tuple(o + n for o, n in zip(target.offset, array.shape))
    if any(o < 0 for o in target.offset) or any(e > n for e, n in zip(end, target.dims)):
        raise IndexError(f"an array of shape {array.shape} at offset {target.offset} ends at {end}, outside the "
                         f"extent {target.dims} of {target.name}")


def _check_converts(array, target):
    """Refuses, before anything is computed, values that HDF5 does not convert."""
    if np.dtype(array.dtype).kind in "OUSV" and array.dtype != target.dtype:
        raise TypeError(f"values of type {array.dtype} do not convert to {target.name}'s {target.dtype}")
    _in_file_type(target, np.zeros(1, array.dtype))


class _Job:
    """One block's encoding, as a dask task's argument (not a tuple, which dask would search for
    keys)."""

    def __init__(self, target, start, shape, stored):
        self.target, self.start, self.shape, self.stored = target, start, shape, stored


def _encode_job(job, block):
    """The block's chunks: [(offset, bytes)]."""
    coords, values = _block_elements(job.target, block, job.shape)
    values = _in_file_type(job.target, values)
    coords += np.asarray(job.start, np.int64)
    return _encode(job.target, coords, values, job.stored)


class _Graph:
    """The array's graph, optimized and made into tasks once: each block's encoding is then
    submitted with the part of the graph it needs, at no cost that grows with the array."""

    def __init__(self, array):
        import dask
        (optimized,) = dask.optimize(array)
        self.name = optimized.name
        self.tasks = dict(optimized.__dask_graph__())
        self.prefix = "h5sparse-encode-" + dask.base.tokenize(optimized)

    def block_task(self, index, job):
        """(key, graph) of the encoding of block `index`."""
        import dask.core
        block = (self.name,) + index
        graph, todo = {}, [block]
        while todo:
            key = todo.pop()
            if key not in graph:
                graph[key] = self.tasks[key]
                todo.extend(dask.core.get_dependencies(self.tasks, key))
        key = (self.prefix,) + index
        graph[key] = (_encode_job, job, block)
        return key, graph


def _tasks(dset, array, target, blocks):
    """(key, graph) of each block's encoding, its stored chunks read when it is made (so that
    reading them keeps pace with the window of blocks in flight)."""
    graph = _Graph(array)
    for index in np.ndindex(*array.numblocks):
        stored = [(offset,) + dset.id.read_direct_chunk(offset) for offset in blocks.stored.get(index, ())]
        yield graph.block_task(index, _Job(target, blocks.start(index), blocks.shape(index), stored))


def _distributed_client():
    """The dask.distributed client dask computes with now, or None (a local scheduler)."""
    import dask
    scheduler = dask.base.get_scheduler()
    client = getattr(scheduler, "__self__", None)
    return client if type(client).__module__.startswith("distributed") else None


def _results_of_client(client, tasks, in_flight):
    """Each task's result as it arrives, at most `in_flight` tasks submitted at a time."""
    from distributed import as_completed

    def submit(task):
        key, graph = task
        return client.get(graph, key, sync=False)

    running = as_completed([submit(t) for t in itertools.islice(tasks, in_flight)])
    try:
        for future in running:
            result = future.result()
            future.release()
            following = next(tasks, None)
            if following is not None:
                running.add(submit(following))
            yield result
    finally:
        for future in running.futures:
            future.cancel()


def _local_get(array, scope):
    """dask's local scheduler for the array. The processes scheduler gets one pool of processes
    for all windows, closed with `scope` (alone, it starts a pool for each call)."""
    import dask
    import dask.multiprocessing
    import dask.threaded
    get = dask.base.get_scheduler(collections=[array]) or dask.threaded.get
    if get is not dask.multiprocessing.get or dask.config.get("pool", None) is not None:
        return get
    from concurrent.futures import ProcessPoolExecutor
    workers = dask.config.get("num_workers", None) or os.cpu_count() or 1
    pool = scope.enter_context(ProcessPoolExecutor(workers, mp_context=dask.multiprocessing.get_context()))
    return functools.partial(get, pool=pool)


def _results_of_windows(get, tasks, in_flight):
    """Each task's result, computed by dask's local scheduler `get` `in_flight` tasks at a time,
    the next window computing while this process writes the previous one."""
    from concurrent.futures import ThreadPoolExecutor

    def compute(window):
        graph = {}
        for _key, g in window:
            graph.update(g)
        return get(graph, [key for key, _g in window])

    with ThreadPoolExecutor(1) as ahead:
        def submit():
            window = list(itertools.islice(tasks, in_flight))
            return ahead.submit(compute, window) if window else None
        pending = submit()
        while pending is not None:
            results = pending.result()
            pending = submit()
            yield from results


def _encoded_chunk_writes():
    """A DXPL for H5Dwrite_chunk of chunks h5sparse_encode_coo made: the connector checks each
    by its header and checksums (it arrives as the encoder made it) instead of decoding it."""
    import h5py
    from . import library
    lib = library()
    f = lib.h5sparse_pset_chunk_write_check
    f.argtypes, f.restype = [ctypes.c_int64, ctypes.c_uint], ctypes.c_int
    dxpl = h5py.h5p.create(h5py.h5p.DATASET_XFER)
    _rc, records = guarded(f, dxpl.id, 1)  # H5SPARSE_CHUNK_CHECK_CHECKSUMS
    if records is not None:
        raise H5SparseError(f"h5sparse_pset_chunk_write_check failed: {_error_text(records)}", records)
    return dxpl


def _default_in_flight(client):
    threads = sum(client.nthreads().values()) if client is not None else os.cpu_count() or 1
    return 2 * threads


def from_dask(dset, array, offset=None, in_flight=None, flush_every=None):
    """Writes a dask array into a sparse dataset at `offset` (default the origin). Blocks may be
    pydata sparse arrays (their fill value the dataset's), scipy.sparse matrices (2-D; their
    stored entries, explicit zeros too, duplicates summed) or dense numpy arrays (elements
    holding the fill value are not written: on a new dataset they stay undefined; elsewhere they
    keep what is stored). Values convert to the dataset's type as write_coo converts them.

    The workers of dask's scheduler (threads, processes or a dask.distributed cluster) encode
    the blocks into finished chunks, merged with the chunks stored in the block's box as
    write_coo merges them; this process stores the bytes as they arrive. Blocks whose boundaries
    do not fall on chunk boundaries are rechunked first, so each chunk comes from one block.
    At most `in_flight` blocks are computed at a time (default twice the scheduler's threads):
    this process holds their chunks and no more. With `flush_every`, the file is flushed after
    that many chunks (docs/DESIGN.md: what a crash leaves). A bad block (wrong shape, values
    that do not convert, another fill value) fails the write before any of its chunks is stored;
    the blocks stored before it stay. Fixed-size datasets only (write_coo takes the others).
    Returns the number of chunks stored."""
    from .coo import is_sparse
    from . import _is_variable_length
    if not is_sparse(dset):
        raise ValueError(f"{dset.name} is not a sparse dataset")
    if dset.file.mode != "r+":
        raise ValueError(f"{dset.file.filename} is open read-only: nothing can be written to {dset.name}")
    if _is_variable_length(dset.dtype):
        raise TypeError(f"{dset.name} holds variable-length values: write them with write_coo")
    target = _Target(dset, offset if offset is not None else (0,) * len(dset.shape))
    _check_fits(array, target)
    _check_converts(array, target)
    array = _aligned(array, target)
    blocks = _Blocks(array, target, dset)
    client = _distributed_client()
    in_flight = in_flight or _default_in_flight(client)
    tasks = _tasks(dset, array, target, blocks)
    dxpl = _encoded_chunk_writes()
    written = 0
    with contextlib.ExitStack() as scope:
        if client is not None:
            results = _results_of_client(client, tasks, in_flight)
        else:
            results = _results_of_windows(_local_get(array, scope), tasks, in_flight)
        for chunks in results:
            for offset_, data in chunks:
                dset.id.write_direct_chunk(offset_, data, filter_mask=0, dxpl=dxpl)
                written += 1
                if flush_every and written % flush_every == 0:
                    dset.file.flush()
    return written
