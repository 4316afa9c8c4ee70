"""Stripes: one sparse dataset written as several files by writers without MPI, each file a
stripe (a box of whole chunks, the rest of its extent left undefined), and one virtual dataset
(HDF5's VDS) that joins them. Unmodified readers (h5py, h5dump) read the virtual dataset's
values, the fill value elsewhere; through the connector get_defined, read_coo, to_scipy and
to_dask answer from the stripes, so what is defined survives the join."""
import numpy as np


def _box(shape, region):
    """(start, stop) per dimension of a tuple of slices (step 1) inside `shape`."""
    region = region if isinstance(region, tuple) else (region,)
    region = region + (slice(None),) * (len(shape) - len(region))
    box = []
    for s, n in zip(region, shape):
        start, stop, step = s.indices(n)
        if step != 1 or stop <= start:
            raise ValueError(f"a stripe's region is a box of slices with step 1, got {region}")
        box.append((start, stop))
    return box


def join_stripes(group, name, stripes):
    """Creates in `group` the virtual dataset `name` joining `stripes`: (dataset, region) pairs,
    each a sparse dataset in a file of its own, all of one shape, type, chunk shape and fill
    value, and `region` (a tuple of slices) its stripe, whose boundaries fall on chunk
    boundaries (or the extent's end). Stripes must not overlap. Returns the virtual dataset."""
    import h5py
    from .coo import is_sparse
    if not stripes:
        raise ValueError("no stripes to join")
    first = stripes[0][0]
    layout = h5py.VirtualLayout(shape=first.shape, dtype=first.dtype)
    for dset, region in stripes:
        if not is_sparse(dset):
            raise ValueError(f"{dset.file.filename}:{dset.name} is not a sparse dataset")
        same = (dset.shape, dset.dtype, dset.chunks, _fill(dset)) == (first.shape, first.dtype, first.chunks, _fill(first))
        if not same:
            raise ValueError(f"{dset.file.filename}:{dset.name} differs from the first stripe in shape, type, chunks "
                             "or fill value")
        box = _box(dset.shape, region)
        for (a, b), c, n in zip(box, dset.chunks, dset.shape):
            if a % c or (b % c and b != n):
                raise ValueError(f"the stripe {region} of {dset.file.filename} does not fall on chunk boundaries "
                                 f"(chunks {dset.chunks})")
        index = tuple(slice(a, b) for a, b in box)
        layout[index] = h5py.VirtualSource(dset)[index]
    from .interop import _fill_value
    return group.create_virtual_dataset(name, layout, fillvalue=_fill_value(first))


def _fill(dset):
    from .interop import _fill_value
    return np.asarray(_fill_value(dset), dset.dtype).tobytes()


def source_chunks(dset):
    """The chunk shape of a virtual dataset's first source (a virtual dataset has none)."""
    import h5py
    source = dset.virtual_sources()[0]
    with h5py.File(source.file_name if source.file_name != "." else dset.file.filename, "r") as f:
        return f[source.dset_name].chunks
