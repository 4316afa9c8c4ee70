"""Collective writes with h5py-mpi (driver="mpio") that also work for ranks with nothing to
write, and the single-shared-file layout: every rank writes its block of one dataset of one
file (as Arkouda's locales do with one file per locale, but into one file).

h5py skips H5Dwrite when a selection is empty, but writes to sparse (and any filtered)
datasets on MPI-IO files are collective: every rank must call H5Dwrite, or the others wait.
`write` always calls it, with an empty selection when the rank has nothing.

    from h5sparse import mpi
    mpi.write(dset, np.s_[lo:hi], my_block)   # or mpi.write(dset, None) on a rank without data
    mpi.write_blocks(path, "x", total, my_lo, my_block, comm, chunks=(1 << 16,), **h5sparse.Sparse())
"""
import h5py
import numpy as np

from . import _bundle

if _bundle.present():
    raise ImportError("h5sparse.mpi needs parallel HDF5, which no wheel has (h5py's wheels are serial, and so "
                      "is this one): use h5py built on parallel HDF5 with h5sparse's Debian package "
                      "h5sparse-openmpi or a CMake build with -DH5SPARSE_PARALLEL=ON")


def _collective_dxpl():
    dxpl = h5py.h5p.create(h5py.h5p.DATASET_XFER)
    dxpl.set_dxpl_mpio(h5py.h5fd.MPIO_COLLECTIVE)
    return dxpl


def write(dset, selection=None, data=None):
    """Collective write of `data` into `selection` (anything dset[...] takes for a simple
    selection; None: nothing from this rank). Every rank of the file's communicator calls it."""
    from h5py._hl import selections
    fspace = dset.id.get_space()
    if selection is None or data is None or np.size(data) == 0:
        fspace.select_none()
        mspace = h5py.h5s.create_simple((1,))
        mspace.select_none()
        buf = np.zeros(1, dtype=dset.dtype)
    else:
        sel = selections.select(dset.shape, selection if isinstance(selection, tuple) else (selection,), dset)
        buf = np.ascontiguousarray(np.asarray(data, dtype=dset.dtype).reshape(sel.array_shape))
        fspace = sel.id
        mspace = h5py.h5s.create_simple(buf.shape if buf.ndim else (1,))
    dset.id.write(mspace, fspace, buf, dxpl=_collective_dxpl())


def write_blocks(path, name, total, lo, block, comm, chunks, **dataset_options):
    """Single shared file: creates `path` (collectively) with a 1-D dataset `name` of `total`
    elements and writes this rank's `block` at offset `lo` (an empty block is fine). Blocks may
    overlap; for a sparse dataset the highest rank wins there."""
    block = np.asarray(block)
    with h5py.File(path, "w", driver="mpio", comm=comm) as f:
        dset = f.create_dataset(name, shape=(total,), dtype=block.dtype, chunks=chunks, **dataset_options)
        write(dset, np.s_[lo:lo + block.size] if block.size else None, block if block.size else None)
