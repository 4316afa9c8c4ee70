"""Structured chunks of format version 1 stay readable: test/data/sparse_v1.h5 was written by
h5sparse before format version 2 (`python3 test_v1_fixture.py write PATH` made it; run today,
that writes the current version). Read through the connector (values and defined sets) and
through the structured-chunk filter alone (plain h5py with only HDF5_PLUGIN_PATH)."""
import os
import pathlib
import subprocess
import sys

import h5py
import pytest
import numpy as np

import h5sparse

FIXTURE = pathlib.Path(__file__).resolve().parent.parent / "data" / "sparse_v1.h5"
PLAIN_ENV = {k: v for k, v in os.environ.items() if k != "HDF5_VOL_CONNECTOR"}


def models():
    """name -> (dtype, chunks, fill, section pipelines, values, defined mask, [erased slices])."""
    rng = np.random.default_rng(1)
    out = {}
    shape = (50, 37)  # edge chunks in both dimensions
    defined = rng.random(shape) < 0.1
    defined[0:16, 0:16] = True  # one complete chunk
    values = (rng.random(shape) * 100).astype(np.float32)
    out["plain_f4"] = (np.float32, (16, 16), -1.5, {}, values, defined, [np.s_[20:30, 5:12]])
    defined = np.zeros(1000, bool)
    defined[100:400] = defined[700:705] = True
    values = np.arange(1000, dtype=np.int32) * 3 - 500
    out["blosc_i4"] = (np.int32, (128,), None, {"values": h5sparse.Blosc("lz4", 5, "byte")}, values, defined,
                       [np.s_[150:160]])
    shape = (20, 30, 7)
    defined = rng.random(shape) < 0.3
    values = rng.integers(8, 60000, shape).astype(np.uint16)
    out["deflate_u2"] = (np.uint16, (8, 8, 4), 7, {"values": h5sparse.Deflate(6), "selection": h5sparse.Deflate(6)},
                         values, defined, [np.s_[:, 10:12, :]])
    defined = np.zeros((64, 64), bool)
    defined[5:20, 7:30] = True  # one rectangle: the block encoding
    values = np.full((64, 64), 3, np.uint8)
    out["rect_u1"] = (np.uint8, (32, 32), None, {"selection": [h5sparse.Shuffle(), h5sparse.LZF()]}, values,
                      defined, [])
    return out


def expected(name):
    """(dense values with undefined = fill, defined mask) after the erases."""
    dtype, _, fill, _, values, defined, erased = models()[name]
    defined = defined.copy()
    for region in erased:
        defined[region] = False
    dense = np.where(defined, values, np.asarray(0 if fill is None else fill, dtype))
    return dense.astype(dtype), defined


def write(path):
    with h5py.File(path, "w") as f:
        for name, (dtype, chunks, fill, pipelines, values, defined, erased) in models().items():
            kwargs = {} if fill is None else {"fillvalue": fill}
            d = f.create_dataset(name, shape=values.shape, dtype=dtype, chunks=chunks, **kwargs,
                                 **h5sparse.Sparse(**pipelines))
            for index in np.argwhere(defined):
                d[tuple(index)] = values[tuple(index)]
            for region in erased:
                h5sparse.erase(d, region)


def test_version_1_chunks_read_through_the_connector():
    with h5py.File(FIXTURE, "r") as f:
        for name in models():
            dense, defined = expected(name)
            d = f[name]
            # The fixture must keep holding version-1 chunks (magic H5SC).
            _, raw = d.id.read_direct_chunk((0,) * d.ndim)
            assert bytes(raw[:5]) == b"H5SC\x01", (name, bytes(raw[:5]))
            assert np.array_equal(d[...], dense), name
            assert np.array_equal(h5sparse.get_defined(d), np.argwhere(defined).astype(np.uint64)), name


def test_version_1_chunks_read_through_the_filter_alone(tmp_path):
    for name in models():
        np.save(tmp_path / f"{name}.npy", expected(name)[0])
    script = ("import h5py, numpy as np, sys\n"
              "f = h5py.File(sys.argv[1], 'r')\n"
              "for name in sys.argv[3:]:\n"
              "    got = f[name][...]\n"
              "    assert np.array_equal(got, np.load(sys.argv[2] + '/' + name + '.npy')), name\n"
              "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", script, str(FIXTURE), str(tmp_path), *models()], env=PLAIN_ENV,
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


if __name__ == "__main__" and sys.argv[1:2] == ["write"]:
    write(sys.argv[2])


def test_flipped_bytes_of_version_1_chunks_are_errors(tmp_path):
    """Every check of version 1 still holds: a flipped byte anywhere in a stored chunk (header,
    both sections) is an HDF5 error naming the dataset and chunk, never data."""
    path = tmp_path / "v1.h5"
    path.write_bytes(FIXTURE.read_bytes())
    trials = int(os.environ.get("H5SPARSE_FLIP_TRIALS", "10000")) // 5
    rng = np.random.default_rng(4)
    with h5py.File(path, "r") as f:
        for name, offset, region in (("blosc_i4", (256,), np.s_[256:384]),
                                     ("deflate_u2", (8, 8, 0), np.s_[8:16, 8:16, 0:4])):
            d = f[name]
            info = d.id.get_chunk_info_by_coord(offset)
            _, good = d.id.read_direct_chunk(offset)
            assert good[:5] == b"H5SC\x01" and info.size == len(good)
            fd = os.open(path, os.O_RDWR)
            try:
                for pos, flip in zip(rng.integers(0, len(good), trials), rng.integers(1, 256, trials)):
                    at = info.byte_offset + int(pos)
                    os.pwrite(fd, bytes([good[pos] ^ int(flip)]), at)
                    with pytest.raises(OSError) as err:
                        d[region]
                    where = f"dataset '/{name}', chunk at ({', '.join(map(str, offset))})"
                    assert where in str(err.value), str(err.value)
                    os.pwrite(fd, good[pos:pos + 1], at)
            finally:
                os.close(fd)
            assert np.array_equal(d[...], expected(name)[0])
