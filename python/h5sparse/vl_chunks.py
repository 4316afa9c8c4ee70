"""Variable-length sparse datasets read without the connector: h5py's read_direct_chunk and
the format of docs/FORMAT.md ("Version 3: variable-length chunks", "Variable-length datasets
(parameters version 2)"), decoded in Python and numpy alone. It shares no code with the C++
core, so it is also the proof that FORMAT.md says enough to read these files.

    elements = h5sparse.read_vl_chunks(f["names"])   # no HDF5_VOL_CONNECTOR needed
    for coords, value in zip(elements.coords, elements.values): ...

Values are what h5py returns for one element of the true type (bytes for strings, or str with
asstr=True; numpy arrays for sequences; tuples for compounds), except that NULL is None.
Checksums are verified; section pipelines are undone with zlib, numpy (shuffle) and Python
(LZF, Blosc frames, BloscLZ); Blosc's LZ4, Snappy and Zstd blocks go to the system's liblz4,
libsnappy and libzstd (_blosc_codecs.py), so no Python package beyond h5py is needed.
"""
import struct
import zlib
from collections import namedtuple

import numpy as np

from . import _blosc_codecs
from ._chunk_errors import CorruptChunkError, MissingCodecError
from ._libhdf5 import filter_values
from ._xxh3 import xxh3_64

__all__ = ["read_vl_chunks", "vl_chunk_info", "VLElements", "CorruptChunkError", "MissingCodecError"]

FILTER_ID = 45100
_VAR_PARAMS_MAGIC = 0x53500002
_VAR_CHUNK_VERSION = 3
_SECTIONS = ("section 0 (selection)", "section 1 (values)", "section 2 (lengths)", "section 3 (data)")
_SEQUENCE, _ASCII, _UTF8 = 0, 1, 2

VLElements = namedtuple("VLElements", "coords values")
VLElements.__doc__ = """The defined elements of a variable-length dataset inside its extent, in
row-major order: coords (n x rank int64 array) and values (list of n values)."""


# --- the dataset's parameters (cd_values of filter 45100, version 2) -----------------------

_Layout = namedtuple("_Layout", "options dims pipelines fixed_size slots type_bytes")


def _corrupt(where, what):
    raise CorruptChunkError(f"{where}: {what}")


def _parse_params(cd, where):
    """The parameters' fields; pipelines are lists of (id, flags, cd_values)."""
    cd = [int(v) for v in cd]
    pos = 0

    def take(n=1):
        nonlocal pos
        if pos + n > len(cd):
            _corrupt(where, "structured-chunk parameters end early")
        pos += n
        return cd[pos - n:pos]

    magic, options, element_size, rank = take(4)
    if magic == _VAR_PARAMS_MAGIC - 1:
        raise ValueError(f"{where} holds fixed-size values: h5py reads it (with the plugin path)")
    if magic != _VAR_PARAMS_MAGIC:
        _corrupt(where, f"not a variable-length sparse dataset (parameters marker {magic:#x})")
    if element_size != 16 or not 1 <= rank <= 32:
        _corrupt(where, f"element size {element_size} or rank {rank} is not a variable-length dataset's")
    dims = take(rank)
    (fill_size,) = take()
    if fill_size != 0:
        _corrupt(where, f"a variable-length dataset with a fill value of {fill_size} bytes")
    pipelines = []
    for _ in range(4):
        (count,) = take()
        pipeline = []
        for _ in range(count):
            fid, flags, k = take(3)
            pipeline.append((fid, flags, take(k)))
        pipelines.append(pipeline)
    fixed_size, slot_count = take(2)
    if not 1 <= slot_count <= 64:
        _corrupt(where, f"{slot_count} variable-length members (1-64)")
    slots = [tuple(take(2)) for _ in range(slot_count)]
    for kind, base in slots:
        if kind > _UTF8:
            raise MissingCodecError(f"{where}: variable-length member kind {kind} is newer than this reader")
        if base == 0 or (kind != _SEQUENCE and base != 1):
            _corrupt(where, f"a member of kind {kind} with base size {base}")
    (size,) = take()
    if size == 0:
        _corrupt(where, "no datatype in the parameters")
    words = take((size + 3) // 4)
    type_bytes = struct.pack(f"<{len(words)}I", *words)[:size]
    return _Layout(options, dims, pipelines, fixed_size, slots, type_bytes)


# --- chunk header (version 3) -------------------------------------------------------------

_Section = namedtuple("_Section", "stored_size unfiltered_size mask stored_checksum checksum filtered")


def _varint(raw, pos, max_bytes, what):
    """(value, next position) of an unsigned LEB128 varint of at most max_bytes bytes."""
    value = 0
    for i in range(max_bytes):
        if pos + i >= len(raw):
            raise CorruptChunkError(f"{what}: a varint runs past the end")
        byte = raw[pos + i]
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            if value >= 1 << (32 if max_bytes == 5 else 64):
                raise CorruptChunkError(f"{what}: a varint over {32 if max_bytes == 5 else 64} bits")
            return value, pos + i + 1
    raise CorruptChunkError(f"{what}: a varint over {max_bytes} bytes")


def _u32(raw, pos, what):
    if pos + 4 > len(raw):
        raise CorruptChunkError(f"{what}: the header runs past the chunk")
    return struct.unpack_from("<I", raw, pos)[0], pos + 4


def _read_header(raw, pipelines):
    """(header size, [4 sections]) of a version-3 chunk, every header rule of FORMAT.md checked."""
    if not raw:
        raise CorruptChunkError("structured chunk of 0 bytes")
    if raw[0] in (2, ord("H")):
        raise CorruptChunkError("a fixed-size structured chunk (format version 1 or 2) in a variable-length dataset")
    if raw[0] != _VAR_CHUNK_VERSION:
        raise CorruptChunkError(f"structured chunk format version {raw[0]} is unknown to this reader")
    if len(raw) < 2 or raw[1] & ~0x1F:
        raise CorruptChunkError("unknown header flags")
    flags, pos, sections = raw[1], 2, []
    for s, pipeline in enumerate(pipelines):
        filtered = bool(flags >> s & 1)
        stored, pos = _varint(raw, pos, 5, "chunk header")
        mask, unfiltered = (1 << len(pipeline)) - 1, stored
        if filtered:
            mask, pos = _varint(raw, pos, 5, "chunk header")
            unfiltered, pos = _varint(raw, pos, 5, "chunk header")
            if not pipeline or mask >> len(pipeline) or mask == (1 << len(pipeline)) - 1:
                raise CorruptChunkError(f"{_SECTIONS[s]}: filter mask {mask:#x} does not fit its pipeline")
        stored_checksum, pos = _u32(raw, pos, "chunk header")
        checksum = stored_checksum
        if filtered:
            checksum, pos = _u32(raw, pos, "chunk header")
        sections.append(_Section(stored, unfiltered, mask, stored_checksum, checksum, filtered))
    padding = 0
    if flags & 0x10:
        padding, pos = _varint(raw, pos, 5, "chunk header")
        if padding == 0:
            raise CorruptChunkError("padding flag with 0 bytes of padding")
    header_checksum, end = _u32(raw, pos, "chunk header")
    if xxh3_64(raw[:pos]) & 0xFFFFFFFF != header_checksum:
        raise CorruptChunkError("header checksum mismatch")
    total = end + sum(s.stored_size for s in sections) + padding
    if total != len(raw) or any(raw[total - padding:]):
        raise CorruptChunkError(f"header, sections and {padding} bytes of zero padding make {total} bytes, "
                                f"the chunk holds {len(raw)}")
    return end, sections


# --- section pipelines --------------------------------------------------------------------

def _unshuffle(data, size):
    """HDF5's byte shuffle undone (element size `size`; trailing bytes stay where they are)."""
    n = len(data) // size
    if size <= 1 or n == 0:
        return data
    head = np.frombuffer(data, np.uint8, n * size).reshape(size, n).T
    return head.tobytes() + data[n * size:]


def _bit_unshuffle(data, size, version):
    """bitshuffle's bit transpose undone (c-blosc's BITSHUFFLE): frames of format version 2 bit
    shuffle only blocks of a multiple of 8 elements, later ones the whole groups of 8."""
    n = len(data) // size // 8 * 8
    if n == 0 or (version <= 2 and n * size != len(data)):
        return data
    bits = np.unpackbits(np.frombuffer(data, np.uint8, n * size), bitorder="little").reshape(size, 8, n)
    return np.packbits(bits.transpose(2, 0, 1), axis=-1, bitorder="little").tobytes() + data[n * size:]


def _lzf(data, limit):
    """A raw liblzf stream decoded (at most `limit` bytes out)."""
    out, i = bytearray(), 0
    while i < len(data):
        ctrl = data[i]
        i += 1
        if ctrl < 32:
            if i + ctrl + 1 > len(data):
                raise CorruptChunkError("LZF literal run past the end of its input")
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
        else:
            length = ctrl >> 5
            if length == 7:
                length += data[i] if i < len(data) else 0
                i += 1
            if i >= len(data):
                raise CorruptChunkError("LZF back reference past the end of its input")
            ref = len(out) - ((ctrl & 0x1F) << 8) - data[i] - 1
            i += 1
            if ref < 0:
                raise CorruptChunkError("LZF back reference before the start of its output")
            for k in range(length + 2):  # may overlap what it writes
                out.append(out[ref + k])
        if len(out) > limit:
            raise CorruptChunkError("LZF output larger than its section")
    return bytes(out)


def _blosc(frame):
    """A c-blosc 1.x frame decoded (blosc.c's blosc_d, block by block and split by split)."""
    if len(frame) < 16:
        raise CorruptChunkError("Blosc frame shorter than its header")
    version, _lz, flags, typesize, nbytes, blocksize, cbytes = struct.unpack_from("<BBBBIII", frame)
    if cbytes != len(frame) or (nbytes and blocksize == 0):
        raise CorruptChunkError("Blosc frame sizes disagree with its length")
    if flags & 0x02:  # memcpyed: the input behind the header
        if 16 + nbytes != len(frame):
            raise CorruptChunkError("Blosc copied frame of the wrong length")
        return frame[16:]
    blocks = -(-nbytes // blocksize)
    starts = struct.unpack_from(f"<{blocks}I", frame, 16)
    out = bytearray()
    for b, start in enumerate(starts):
        size = min(blocksize, nbytes - b * blocksize)
        leftover = size < blocksize
        splits = typesize if (not flags & 0x10 and typesize <= 16 and size // typesize >= 128 and not leftover) else 1
        block, pos = bytearray(), start
        for _ in range(splits):
            (length,) = struct.unpack_from("<I", frame, pos)
            piece = frame[pos + 4:pos + 4 + length]
            block += piece if length == size // splits else _blosc_codecs.decode_block(flags >> 5, piece, size // splits)
            pos += 4 + length
        if len(block) != size:
            raise CorruptChunkError("Blosc block decodes to the wrong size")
        if flags & 0x01 and typesize > 1:
            block = _unshuffle(bytes(block), typesize)
        elif flags & 0x04:
            block = _bit_unshuffle(bytes(block), typesize, version)
        out += block
    return bytes(out)


def _unfilter(stored, section, pipeline, element_size, name):
    """A section's stored bytes back through its pipeline (filters whose mask bit is clear, in
    reverse order), both checksums verified."""
    if xxh3_64(stored) & 0xFFFFFFFF != section.stored_checksum:
        raise CorruptChunkError(f"{name} stored-bytes checksum mismatch")
    if not section.filtered:
        return stored
    data = stored
    for i in reversed(range(len(pipeline))):
        if section.mask >> i & 1:
            continue
        fid = pipeline[i][0]
        try:
            if fid == 1:
                data = zlib.decompress(data)
            elif fid == 2:
                data = _unshuffle(data, element_size)
            elif fid == 32000:
                data = _lzf(data, section.unfiltered_size)
            elif fid == 32001:
                data = _blosc(data)
            else:
                raise MissingCodecError(f"{name}: filter {fid} is not one FORMAT.md allows in a section pipeline")
        except MissingCodecError as e:
            raise MissingCodecError(f"{name}: {e}") from None
        except CorruptChunkError as e:
            raise CorruptChunkError(f"{name}: {e}") from None
        except Exception as e:  # zlib.error, struct.error: the bytes do not decode
            raise CorruptChunkError(f"{name}: filter {fid} cannot undo the stored bytes ({e})") from None
    if len(data) != section.unfiltered_size:
        raise CorruptChunkError(f"{name} unfilters to {len(data)} bytes, its header says {section.unfiltered_size}")
    if xxh3_64(data) & 0xFFFFFFFF != section.checksum:
        raise CorruptChunkError(f"{name} unfiltered checksum mismatch")
    return data


# --- section 0: the encoded selection ----------------------------------------------------

def _decode_selection(data, dims):
    """The defined offsets (ascending int64 array) of an encoded selection, every rule checked."""
    n = int(np.prod(dims))
    if not data:
        raise CorruptChunkError("an empty encoded selection")
    tag, pos = data[0], 1

    def varint():
        nonlocal pos
        value, pos = _varint(data, pos, 10, _SECTIONS[0])
        return value

    def count():
        c = varint()
        if c > n:
            raise CorruptChunkError(f"{_SECTIONS[0]}: count {c} above the chunk's {n} elements")
        return c

    if tag == 0:
        offsets = np.zeros(0, np.int64)
    elif tag == 1:
        offsets = np.arange(n, dtype=np.int64)
    elif tag == 2:
        body = np.frombuffer(data, np.uint8, offset=1)
        if len(body) != -(-n // 8):
            raise CorruptChunkError(f"{_SECTIONS[0]}: a bitmap of {len(body)} bytes for {n} elements")
        bits = np.unpackbits(body, bitorder="little")
        if bits[n:].any():
            raise CorruptChunkError(f"{_SECTIONS[0]}: bitmap bits set past the chunk")
        offsets, pos = np.flatnonzero(bits[:n]).astype(np.int64), len(data)
    elif tag in (3, 4):
        at, found = 0, []
        for _ in range(count()):
            start = at + varint()
            length = varint() + 1 if tag == 4 else 1
            if start + length > n:
                raise CorruptChunkError(f"{_SECTIONS[0]}: offsets outside the chunk")
            found.append(np.arange(start, start + length, dtype=np.int64))
            at = start + length
        offsets = np.concatenate(found) if found else np.zeros(0, np.int64)
    elif tag == 5:
        mask = np.zeros(dims, bool)
        for _ in range(count()):
            box = []
            for d in dims:
                start = varint()
                end = start + varint() + 1
                if end > d:
                    raise CorruptChunkError(f"{_SECTIONS[0]}: a block outside the chunk")
                box.append(slice(start, end))
            mask[tuple(box)] = True
        offsets = np.flatnonzero(mask.ravel()).astype(np.int64)
    elif tag == 6:
        c = count()
        if pos >= len(data) or data[pos] > 32:
            raise CorruptChunkError(f"{_SECTIONS[0]}: Rice parameter missing or above 32")
        k = data[pos]
        bits = np.unpackbits(np.frombuffer(data, np.uint8, offset=pos + 1), bitorder="little").tolist()
        b, at, found = 0, 0, []
        for _ in range(c):
            q = 0
            while b < len(bits) and bits[b]:  # the gap's high part in unary, ended by a zero bit
                q, b = q + 1, b + 1
            if b + 1 + k > len(bits):
                raise CorruptChunkError(f"{_SECTIONS[0]}: Rice bitstream ends early")
            low = sum(bit << i for i, bit in enumerate(bits[b + 1:b + 1 + k]))
            at += q << k | low
            if at >= n:
                raise CorruptChunkError(f"{_SECTIONS[0]}: offsets outside the chunk")
            found.append(at)
            at, b = at + 1, b + 1 + k
        if len(bits) // 8 != -(-b // 8) or any(bits[b:]):
            raise CorruptChunkError(f"{_SECTIONS[0]}: Rice bitstream of the wrong length or nonzero padding")
        offsets, pos = np.array(found, np.int64), len(data)
    else:
        raise CorruptChunkError(f"{_SECTIONS[0]}: unknown encoding tag {tag}")
    if pos != len(data):
        raise CorruptChunkError(f"{_SECTIONS[0]}: bytes after the encoded selection")
    return offsets


# --- sections 2 and 3: lengths and payloads ----------------------------------------------

def _payloads(lengths, data, count, slots):
    """Per slot, per element: the payload bytes, or None for NULL (slot by slot, as stored)."""
    if len(lengths) < count * len(slots):
        raise CorruptChunkError(f"{_SECTIONS[2]} holds {len(lengths)} bytes for {count * len(slots)} lengths")
    pos, at, out = 0, 0, []
    for _kind, base in slots:
        slot = []
        for _ in range(count):
            word, pos = _varint(lengths, pos, 5, _SECTIONS[2])
            size = (word - 1) * base if word else 0
            if at + size > len(data):
                raise CorruptChunkError(f"{_SECTIONS[2]}: the lengths exceed the {len(data)} bytes of {_SECTIONS[3]}")
            slot.append(data[at:at + size] if word else None)
            at += size
        out.append(slot)
    if pos != len(lengths):
        raise CorruptChunkError(f"{_SECTIONS[2]} has {len(lengths) - pos} bytes after its last length")
    if at != len(data):
        raise CorruptChunkError(f"{_SECTIONS[2]}: the lengths add up to {at} bytes, {_SECTIONS[3]} holds {len(data)}")
    return out


# --- values in the true type --------------------------------------------------------------

class _ValueMaker:
    """Turns an element's fixed part and payloads into the value h5py gives for the true type."""

    def __init__(self, layout, asstr, where):
        import h5py
        true_type = h5py.h5t.decode(layout.type_bytes)
        self.compound = true_type.get_class() == h5py.h5t.COMPOUND
        types = ([true_type.get_member_type(i) for i in range(true_type.get_nmembers())] if self.compound
                 else [true_type])
        self.members, fixed, slot = [], 0, 0  # (slot index or None, fixed offset, dtype)
        for t in types:
            variable = t.get_class() == h5py.h5t.VLEN or (t.get_class() == h5py.h5t.STRING and t.is_variable_str())
            if variable:
                sequence = t.get_class() == h5py.h5t.VLEN
                if slot >= len(layout.slots) or sequence != (layout.slots[slot][0] == _SEQUENCE):
                    _corrupt(where, "the datatype's variable-length members disagree with the parameters'")
                base = t.get_super().dtype if sequence else None
                self.members.append((slot, None, base))
                slot += 1
            else:
                self.members.append((None, fixed, t.dtype))
                fixed += t.get_size()
        if fixed != layout.fixed_size or slot != len(layout.slots):
            _corrupt(where, "the datatype disagrees with the parameters' fixed part or members")
        self.slots, self.fixed_size, self.asstr = layout.slots, fixed, asstr

    def value(self, fixed, payloads, e):
        out = []
        for slot, offset, dtype in self.members:
            if slot is None:
                start = e * self.fixed_size + offset
                out.append(np.frombuffer(fixed, dtype, 1, start)[0])
                continue
            payload, kind = payloads[slot][e], self.slots[slot][0]
            if payload is None:
                out.append(None)
            elif kind == _SEQUENCE:
                out.append(np.frombuffer(payload, dtype).copy())
            else:
                out.append(payload.decode("utf-8" if kind == _UTF8 else "ascii") if self.asstr else payload)
        return tuple(out) if self.compound else out[0]


# --- the dataset --------------------------------------------------------------------------

def _chunk_elements(raw, filter_mask, layout, maker):
    """(offsets, values) of one stored chunk."""
    if filter_mask & 1:  # stored around the filter: only a dense carrier chunk of zeros is valid
        if any(raw):
            raise CorruptChunkError("a dense carrier chunk with data in a variable-length dataset")
        return np.zeros(0, np.int64), []
    header_size, sections = _read_header(raw, layout.pipelines)
    data_element = layout.slots[0][1] if len({base for _k, base in layout.slots}) == 1 else 1
    element_sizes = (1, max(layout.fixed_size, 1), 1, data_element)
    parts, pos = [], header_size
    for s, section in enumerate(sections):
        stored = raw[pos:pos + section.stored_size]
        pos += section.stored_size
        parts.append(_unfilter(stored, section, layout.pipelines[s], element_sizes[s], _SECTIONS[s]))
    offsets = _decode_selection(parts[0], layout.dims)
    count = len(offsets)
    if len(parts[1]) != count * layout.fixed_size:
        raise CorruptChunkError(f"{_SECTIONS[1]} holds {len(parts[1])} bytes for {count} defined elements")
    payloads = _payloads(parts[2], parts[3], count, layout.slots)
    return offsets, [maker.value(parts[1], payloads, e) for e in range(count)]


def _stored_chunks(dset):
    """(layout, [(chunk info, filter mask, stored bytes)]) of a variable-length sparse dataset."""
    cd_values = filter_values(dset.id.get_create_plist(), FILTER_ID)
    if cd_values is None:
        raise ValueError(f"dataset '{dset.name}' is no sparse dataset (no filter {FILTER_ID})")
    layout = _parse_params(cd_values, f"dataset '{dset.name}'")
    chunks = []
    for i in range(dset.id.get_num_chunks()):
        info = dset.id.get_chunk_info(i)
        filter_mask, raw = dset.id.read_direct_chunk(info.chunk_offset)
        chunks.append((info, filter_mask, bytes(raw)))
    return layout, chunks


def _naming_chunk(dset, origin, error):
    return type(error)(f"dataset '{dset.name}', chunk at {tuple(int(v) for v in origin)}: {error}")


def vl_chunk_info(dset):
    """A StructChunkInfo (chunks.py) per stored chunk of variable-length dataset `dset`, its four
    sections' masks and sizes read from the chunk's header (header checksum verified), without
    the connector. A chunk stored around the filter (a dense carrier chunk) has no sections: 0s."""
    from .chunks import StructChunkInfo
    layout, chunks = _stored_chunks(dset)
    out = []
    for info, filter_mask, raw in chunks:
        sections = [_Section(0, 0, 0, 0, 0, False)] * 4
        if not filter_mask & 1:
            try:
                sections = _read_header(raw, layout.pipelines)[1]
            except CorruptChunkError as e:
                raise _naming_chunk(dset, info.chunk_offset, e) from None
        out.append(StructChunkInfo(tuple(int(v) for v in info.chunk_offset), tuple(s.mask for s in sections),
                                   tuple(s.stored_size for s in sections), tuple(s.unfiltered_size for s in sections),
                                   int(info.byte_offset), int(info.size)))
    return out


def read_vl_chunks(dset, asstr=False):
    """The defined elements of variable-length sparse dataset `dset` (an h5py Dataset, opened
    with or without the connector) as VLElements, read with read_direct_chunk and decoded here.
    asstr: strings as str (h5py's asstr()) rather than bytes. Raises CorruptChunkError naming
    the chunk when stored bytes break the format, MissingCodecError for a codec not at hand."""
    layout, chunks = _stored_chunks(dset)
    maker = _ValueMaker(layout, asstr, f"dataset '{dset.name}'")
    rank, shape = len(layout.dims), dset.shape
    coords, values = [], []
    for info, filter_mask, raw in chunks:
        origin = info.chunk_offset
        try:
            offsets, chunk_values = _chunk_elements(raw, filter_mask, layout, maker)
        except (CorruptChunkError, MissingCodecError) as e:
            raise _naming_chunk(dset, origin, e) from None
        at = np.array(np.unravel_index(offsets, layout.dims)).T.reshape(-1, rank) + np.array(origin, np.int64)
        inside = (at < np.array(shape, np.int64)).all(axis=1)
        coords.append(at[inside])
        values.extend(v for v, keep in zip(chunk_values, inside) if keep)
    coords = np.concatenate(coords) if coords else np.zeros((0, rank), np.int64)
    order = np.lexsort(coords.T[::-1]) if len(coords) else np.zeros(0, np.int64)
    return VLElements(coords[order], [values[k] for k in order])
