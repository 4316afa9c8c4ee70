"""One MPI job of the parallel model test (run by test_mpi.py under mpirun).

Every rank runs the same random sequence of collective steps on sparse datasets of one MPI-IO
file (h5py-mpi, driver="mpio", through the parallel h5sparse connector): writes of a random
selection per rank (boxes, strided boxes, point lists with duplicates, nothing at all), by H5Dwrite
or by coordinates (h5sparse.write_coo), erases (of a selection or by coordinates),
independent reads and get-defined queries. Every rank derives every rank's selections from the
shared seed, so rank 0 keeps a numpy model of the RFC semantics: the selected elements become
defined (later duplicates win inside a rank, a higher rank wins where ranks overlap), erased
elements become undefined, and with fill_is_undefined written fill values become undefined.
Reads and get-defined are checked on every rank against the model; at the end rank 0 saves the
model beside the file for the serial re-read.

    mpirun -n N python3 mpi_model.py FILE SEED STEPS
"""
import sys

import h5py
import numpy as np
from mpi4py import MPI

import h5sparse

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
path, seed, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

# name: (shape, chunks, dtype, fill value, fill_is_undefined)
DATASETS = {
    "plain": ((37, 23), (8, 5), "f4", 0, False),
    "fill_undefined": ((29, 31), (6, 7), "i2", -1, True),
    "one_dim": ((301,), (16,), "f8", 0, False),
}


def collective_dxpl():
    dxpl = h5py.h5p.create(h5py.h5p.DATASET_XFER)
    dxpl.set_dxpl_mpio(h5py.h5fd.MPIO_COLLECTIVE)
    return dxpl


def random_selection(rng, shape):
    """('none'|'box'|'points', spec): a selection in the dataset's row-major element order."""
    kind = rng.choice(["none", "box", "strided", "points", "all"], p=[0.15, 0.35, 0.15, 0.3, 0.05])
    if kind == "none":
        return "none", None
    if kind == "all":
        return "box", tuple(slice(0, n) for n in shape)
    if kind in ("box", "strided"):
        step = 1 if kind == "box" else int(rng.integers(2, 4))
        out = []
        for n in shape:
            a = int(rng.integers(0, n))
            b = int(rng.integers(a + 1, min(n, a + 1 + max(2, n // 2)) + 1))
            out.append(slice(a, b, step))
        return "box", tuple(out)
    count = int(rng.integers(1, 40))
    coords = np.stack([rng.integers(0, n, count) for n in shape], axis=1)
    coords = np.concatenate([coords, coords[: count // 4]])  # some duplicates, later ones win
    return "points", coords


def file_space(dset, kind, spec):
    space = dset.id.get_space()
    if kind == "none":
        space.select_none()
    elif kind == "box":
        start = tuple(s.start for s in spec)
        stride = tuple(s.step or 1 for s in spec)
        count = tuple(len(range(s.start, s.stop, s.step or 1)) for s in spec)
        space.select_hyperslab(start, count, stride)
    else:
        space.select_elements(np.ascontiguousarray(spec, dtype=np.uint64))
    return space


def model_indices(shape, kind, spec):
    """The selected elements in the order H5Dwrite pairs them with memory, as flat indices."""
    if kind == "none":
        return np.zeros(0, dtype=np.int64)
    if kind == "box":
        return np.arange(int(np.prod(shape))).reshape(shape)[spec].ravel()
    return np.ravel_multi_index(tuple(spec.T), shape)


def coordinates(shape, kind, spec):
    """The selected elements' coordinates ((N, rank)), in the order H5Dwrite pairs them."""
    return np.stack(np.unravel_index(model_indices(shape, kind, spec), shape), axis=1).reshape(-1, len(shape))


def erase(dset, space):
    """h5sparse_derase with an h5py dataspace (collective on an MPI-IO file)."""
    if h5sparse.library().h5sparse_derase(dset.id.id, space.id, 0) < 0:
        raise RuntimeError(f"h5sparse_derase failed on {dset.name}")


def main():
    rng = np.random.default_rng(seed)
    dxpl = collective_dxpl()
    models = {}
    with h5py.File(path, "w", driver="mpio", comm=comm) as f:
        assert h5sparse.connector_version(f), "the h5sparse connector is not on"
        for name, (shape, chunks, dtype, fill, fill_undefined) in DATASETS.items():
            f.create_dataset(name, shape=shape, chunks=chunks, dtype=dtype, fillvalue=fill,
                             **h5sparse.Sparse(values=h5sparse.Blosc(cname="lz4", clevel=3),
                                               fill_is_undefined=fill_undefined))
            models[name] = (np.full(int(np.prod(shape)), fill, dtype=dtype), np.zeros(int(np.prod(shape)), dtype=bool))
        for step in range(steps):
            name = str(rng.choice(list(DATASETS)))
            shape, _, dtype, fill, fill_undefined = DATASETS[name]
            dset = f[name]
            values, defined = models[name]
            op = rng.choice(["write", "erase", "read"], p=[0.55, 0.2, 0.25])
            selections = [random_selection(rng, shape) for _ in range(size)]
            if op == "write":
                payloads = []
                for kind, spec in selections:
                    n = len(model_indices(shape, kind, spec))
                    data = (rng.integers(-3, 50, n) if dtype == "i2" else rng.normal(size=n)).astype(dtype)
                    data[rng.random(n) < 0.2] = fill  # fill values: defined, or undefined with the option
                    payloads.append(data)
                kind, spec = selections[rank]
                data = payloads[rank]
                if rng.random() < 0.4:  # the same call on every rank: the shared generator says which
                    h5sparse.write_coo(dset, coordinates(shape, kind, spec), data)
                else:
                    mem = h5py.h5s.create_simple((max(len(data), 1),))
                    if len(data) == 0:
                        mem.select_none()
                    dset.id.write(mem, file_space(dset, kind, spec),
                                  np.ascontiguousarray(data if len(data) else np.zeros(1, dtype)), dxpl=dxpl)
                for (kind, spec), data in zip(selections, payloads):  # rank order: higher ranks win
                    idx = model_indices(shape, kind, spec)
                    values[idx] = data
                    defined[idx] = True
                    if fill_undefined:
                        last = {}
                        for i, v in zip(idx, data):
                            last[i] = v
                        gone = np.array([i for i, v in last.items() if v == fill], dtype=np.int64)
                        defined[gone] = False
                        values[gone] = fill
            elif op == "erase":
                kind, spec = selections[rank]
                if rng.random() < 0.4:
                    h5sparse.erase_coo(dset, coordinates(shape, kind, spec))
                else:
                    erase(dset, file_space(dset, kind, spec))
                for kind, spec in selections:
                    idx = model_indices(shape, kind, spec)
                    defined[idx] = False
                    values[idx] = fill
            else:  # every rank reads its own box independently, and asks what is defined there
                kind, spec = selections[rank]
                if kind == "box":
                    expect = values.reshape(shape)[spec]
                    assert np.array_equal(dset[spec], expect), (step, name, "read")
                    got = h5sparse.get_defined(dset, spec)
                    mask = np.zeros(shape, dtype=bool)
                    mask[spec] = defined.reshape(shape)[spec]
                    assert np.array_equal(got, np.argwhere(mask).astype(np.uint64)), (step, name, "get_defined")
            comm.Barrier()
        for name, (shape, *_rest) in DATASETS.items():  # whole-dataset check on every rank
            values, defined = models[name]
            assert np.array_equal(f[name][...], values.reshape(shape)), name
            coords = h5sparse.get_defined(f[name])
            assert np.array_equal(coords, np.argwhere(defined.reshape(shape)).astype(np.uint64)), name
    if rank == 0:
        np.savez(path + ".model.npz", **{f"{n}_values": m[0].reshape(DATASETS[n][0]) for n, m in models.items()},
                 **{f"{n}_defined": m[1].reshape(DATASETS[n][0]) for n, m in models.items()})
    print(f"rank {rank}: {steps} steps checked", flush=True)


if __name__ == "__main__":
    main()
