"""Direct structured-chunk I/O on h5py datasets (the RFC's H5D*_struct_chunk* functions):
a chunk's sections as stored (after each section's filter pipeline), their sizes and filter
masks, chunk info by index or coordinate, iteration over the stored chunks. Needs the h5sparse
VOL connector; see h5sparse.h for the exact semantics of each call.

    for info in h5sparse.struct_chunks(src):                 # every stored chunk, once
        info, sections = h5sparse.read_struct_chunk(src, info.offset)
        h5sparse.write_struct_chunk(dst, info.offset, sections, info)   # verified, then stored
"""
import ctypes
from collections import namedtuple

from . import _space_of, library
from ._calls import H5SparseError, call

__all__ = ["StructChunkInfo", "ChunkIOError", "read_struct_chunk", "write_struct_chunk", "struct_chunk_info",
           "struct_chunk_info_by_coord", "struct_chunk_iter", "struct_chunks"]

SECTION_SELECTION, SECTION_VALUES = 0, 1
_MAX_SECTIONS = 3
_H5S_ALL = 0
_H5P_DEFAULT = 0
_HADDR_UNDEF = 2**64 - 1

StructChunkInfo = namedtuple("StructChunkInfo", "offset filter_mask section_size section_orig_size addr size")
StructChunkInfo.__doc__ = """One stored structured chunk: its first element (offset), per section
(selection, values) the filter mask, stored size and unfiltered size; the chunk's file address
and stored size (the structured chunk's header, docs/FORMAT.md, + the sections)."""


class ChunkIOError(H5SparseError):
    """A direct chunk call failed; the message holds the h5sparse records of the error stack."""


class _Info(ctypes.Structure):  # h5sparse_struct_chunk_info_t
    _fields_ = [("num_sections", ctypes.c_uint8),
                ("sections", ctypes.c_int * _MAX_SECTIONS),
                ("filter_mask", ctypes.c_uint32 * _MAX_SECTIONS),
                ("section_size", ctypes.c_size_t * _MAX_SECTIONS),
                ("section_orig_size", ctypes.c_size_t * _MAX_SECTIONS)]


_ITER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(_Info),
                         ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t,
                         ctypes.c_void_p)
_declared = False


def _lib():
    global _declared
    lib = library()
    if not _declared:
        hid, herr, hsize_p = ctypes.c_int64, ctypes.c_int, ctypes.POINTER(ctypes.c_uint64)
        info_p = ctypes.POINTER(_Info)
        for name, args in [
                ("h5sparse_dwrite_struct_chunk", [hid, hid, info_p, hsize_p, ctypes.POINTER(ctypes.c_char_p)]),
                ("h5sparse_dread_struct_chunk", [hid, hid, hsize_p, info_p, ctypes.POINTER(ctypes.c_void_p)]),
                ("h5sparse_dget_struct_chunk_info", [hid, hid, ctypes.c_uint64, hsize_p, info_p, hsize_p, hsize_p]),
                ("h5sparse_dget_struct_chunk_info_by_coord", [hid, hsize_p, info_p, hsize_p, hsize_p]),
                ("h5sparse_dstruct_chunk_iter", [hid, hid, _ITER, ctypes.c_size_t, ctypes.c_void_p])]:
            getattr(lib, name).restype = herr
            getattr(lib, name).argtypes = args
        _declared = True
    return lib


def _call(what, dset, function, *args):
    return call(_lib(), what, dset, function, *args, error=ChunkIOError)


def _offset(dset, offset):
    if len(offset) != len(dset.shape):
        raise ValueError(f"chunk offset {tuple(offset)} has {len(offset)} coordinates, the dataset {len(dset.shape)}")
    return (ctypes.c_uint64 * len(offset))(*[int(v) for v in offset])


def _to_tuple(info, offset, addr, size):
    n = info.num_sections
    return StructChunkInfo(tuple(int(v) for v in offset), tuple(info.filter_mask[:n]),
                           tuple(info.section_size[:n]), tuple(info.section_orig_size[:n]),
                           None if addr == _HADDR_UNDEF else int(addr), int(size))


def read_struct_chunk(dset, offset, info=None):
    """(info, [section 0 bytes, section 1 bytes]) of the chunk whose first element is `offset`:
    the stored (filtered) section bytes, verified by their checksums, not decoded. Passing the
    chunk's StructChunkInfo (from struct_chunks, say) saves the size query."""
    if info is None:
        info = struct_chunk_info_by_coord(dset, offset)
        if info is None:
            raise ChunkIOError(f"read_struct_chunk failed on {dset.name}: no chunk is stored at {tuple(offset)}")
    c = _Info()
    c.section_size[0], c.section_size[1] = info.section_size  # capacities of the buffers
    buffers = [ctypes.create_string_buffer(max(1, size)) for size in info.section_size]
    pointers = (ctypes.c_void_p * 2)(ctypes.addressof(buffers[0]), ctypes.addressof(buffers[1]))
    _call("read_struct_chunk", dset, _lib().h5sparse_dread_struct_chunk, _H5P_DEFAULT, _offset(dset, offset),
          ctypes.byref(c), pointers)
    got = _to_tuple(c, offset, info.addr, info.size)  # the header's size is not in the sections' info
    return got, [ctypes.string_at(buffers[i], c.section_size[i]) for i in range(c.num_sections)]


def write_struct_chunk(dset, offset, sections, info=None, filter_mask=None, section_orig_size=None):
    """Stores the chunk at `offset` made of `sections` (stored bytes of section 0 and 1), with
    the filter masks and unfiltered sizes of `info` (a StructChunkInfo, e.g. from
    read_struct_chunk) or given explicitly. The sections are verified against the dataset's
    section pipelines first; anything inconsistent raises ChunkIOError and stores nothing."""
    if info is not None:
        filter_mask = info.filter_mask if filter_mask is None else filter_mask
        section_orig_size = info.section_orig_size if section_orig_size is None else section_orig_size
    if filter_mask is None or section_orig_size is None or len(sections) != 2:
        raise ValueError("write_struct_chunk needs 2 sections, their filter masks and unfiltered sizes")
    c = _Info()
    c.num_sections = 2
    c.sections[0], c.sections[1] = SECTION_SELECTION, SECTION_VALUES
    keep = [s if isinstance(s, bytes) else bytes(s) for s in sections]
    for i in range(2):
        c.filter_mask[i] = int(filter_mask[i])
        c.section_size[i] = len(keep[i])
        c.section_orig_size[i] = int(section_orig_size[i])
    pointers = (ctypes.c_char_p * 2)(keep[0], keep[1])  # no copies: the bytes objects' own buffers
    _call("write_struct_chunk", dset, _lib().h5sparse_dwrite_struct_chunk, _H5P_DEFAULT, ctypes.byref(c),
          _offset(dset, offset), pointers)


def struct_chunk_info(dset, index, selection=None):
    """The index-th stored chunk (chunk index order) among those meeting `selection`
    (anything dset[...] accepts; default: all)."""
    space = _space_of(dset, selection)
    rank = len(dset.shape)
    off, info, addr, size = (ctypes.c_uint64 * rank)(), _Info(), ctypes.c_uint64(), ctypes.c_uint64()
    _call("struct_chunk_info", dset, _lib().h5sparse_dget_struct_chunk_info,
          space.id if space is not None else _H5S_ALL, int(index), off, ctypes.byref(info), ctypes.byref(addr),
          ctypes.byref(size))
    return _to_tuple(info, off, addr.value, size.value)


def struct_chunk_info_by_coord(dset, offset):
    """The chunk whose first element is `offset`, or None when no chunk is stored there."""
    info, addr, size = _Info(), ctypes.c_uint64(), ctypes.c_uint64()
    _call("struct_chunk_info_by_coord", dset, _lib().h5sparse_dget_struct_chunk_info_by_coord,
          _offset(dset, offset), ctypes.byref(info), ctypes.byref(addr), ctypes.byref(size))
    return None if size.value == 0 else _to_tuple(info, offset, addr.value, size.value)


def struct_chunk_iter(dset, func):
    """Calls func(StructChunkInfo) once per stored chunk; a true return value stops the
    iteration and is returned (else None). func may read and write chunks itself."""
    rank = len(dset.shape)
    state = {"error": None, "stop": None}

    def visit(offset, info, addr, size, _size, _data):
        try:
            result = func(_to_tuple(info.contents, offset[:rank], addr.contents.value, size.contents.value))
        except BaseException as e:  # re-raised below, after HDF5 has unwound
            state["error"] = e
            return -1
        if result:
            state["stop"] = result
            return 1
        return 0

    callback = _ITER(visit)
    try:
        _call("struct_chunk_iter", dset, _lib().h5sparse_dstruct_chunk_iter, _H5P_DEFAULT, callback, 0, None)
    except ChunkIOError:
        if state["error"] is not None:
            raise state["error"] from None
        raise
    return state["stop"]


def struct_chunks(dset):
    """Every stored chunk's StructChunkInfo, in chunk index order."""
    out = []
    struct_chunk_iter(dset, out.append)
    return out
