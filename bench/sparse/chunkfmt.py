"""An independent reader of h5sparse's structured chunk (docs/FORMAT.md), for the benchmarks.

It shares no code with the C++ core: it parses the header (format version 1 or 2) and, where Python's standard
library can undo the section pipeline (no filter, or deflate, or shuffle of 1-byte elements),
decodes section 0 (the encoded selection) into the set of defined element offsets, so the
benchmark checks that what it measures is what it wrote.
"""
import struct
import zlib

import numpy as np

MAGIC = b"H5SC"  # format version 1
V1_HEADER_SIZE = 60
ALL_SKIPPED = 0xFFFFFFFF  # the mask of a version-2 section no filter ran on (every filter skipped)
TAGS = {0: "empty", 1: "all", 2: "bitmap", 3: "offsets", 4: "runs", 5: "blocks", 6: "rice offsets"}


class Section:
    def __init__(self, stored_size, unfiltered_size, filter_mask, stored_checksum, checksum, data):
        self.stored_size = stored_size
        self.unfiltered_size = unfiltered_size
        self.filter_mask = filter_mask
        self.stored_checksum = stored_checksum
        self.checksum = checksum
        self.data = data  # the stored bytes


def _varint32(raw, pos):
    v = shift = 0
    while True:
        if shift > 28 or pos >= len(raw):
            raise ValueError("bad varint in the chunk header")
        b = raw[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def parse_chunk(raw):
    """The two sections of a structured chunk (raw bytes as H5Dread_chunk returns them),
    format version 1 or 2. A version-2 section no filter ran on has filter_mask ALL_SKIPPED."""
    raw = bytes(raw)
    if raw[:1] == MAGIC[:1]:
        if len(raw) < V1_HEADER_SIZE or raw[:4] != MAGIC or raw[4] != 1 or raw[5] != 2:
            raise ValueError("not a structured chunk of format version 1")
        padding = struct.unpack_from("<H", raw, 6)[0]
        infos = []
        for s in range(2):
            stored, unfiltered, mask, stored_ck = struct.unpack_from("<IIII", raw, 8 + 24 * s)
            (ck,) = struct.unpack_from("<Q", raw, 8 + 24 * s + 16)
            infos.append((stored, unfiltered, mask, stored_ck, ck))
        pos = V1_HEADER_SIZE
    elif raw[:1] == b"\x02" and len(raw) >= 2:
        flags, pos, infos = raw[1], 2, []
        if flags & ~7:
            raise ValueError(f"unknown header flags {flags:#x}")
        for s in range(2):
            filtered = flags >> s & 1
            stored, pos = _varint32(raw, pos)
            mask, unfiltered = ALL_SKIPPED, stored
            if filtered:
                mask, pos = _varint32(raw, pos)
                unfiltered, pos = _varint32(raw, pos)
            (stored_ck,) = struct.unpack_from("<I", raw, pos)
            pos += 4
            ck = stored_ck
            if filtered:
                (ck,) = struct.unpack_from("<I", raw, pos)
                pos += 4
            infos.append((stored, unfiltered, mask, stored_ck, ck))
        padding = 0
        if flags & 4:
            padding, pos = _varint32(raw, pos)
        pos += 4  # the header checksum
    else:
        raise ValueError(f"not a structured chunk (first byte {raw[:1]!r})")
    sections = []
    for info in infos:
        sections.append(Section(*info, raw[pos:pos + info[0]]))
        pos += info[0]
    if pos + padding != len(raw) or any(raw[pos:]):
        raise ValueError(f"sections and {padding} zero bytes of padding add up to {pos + padding} bytes, "
                         f"chunk has {len(raw)}")
    return sections


def unfilter(section, pipeline):
    """Section bytes before the pipeline, or None when a filter is not one we can undo here.

    pipeline: list of (filter id, cd_values) in write order."""
    data = section.data
    for i in reversed(range(len(pipeline))):
        if section.filter_mask >> i & 1:
            continue
        fid = pipeline[i][0]
        if fid == 1:
            data = zlib.decompress(data)
        elif fid == 2:
            pass  # shuffle of 1-byte elements is the identity
        else:
            return None
    if len(data) != section.unfiltered_size:
        raise ValueError(f"section unfilters to {len(data)} bytes, header says {section.unfiltered_size}")
    return data


def blosc_frame_sizes(data):
    """(uncompressed, compressed) sizes from a c-blosc 1.x frame header."""
    nbytes, _blocksize, cbytes = struct.unpack_from("<III", data, 4)
    return nbytes, cbytes


class _Reader:
    def __init__(self, data, pos):
        self.data, self.pos = data, pos

    def next(self):
        v = shift = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v


def decode_selection(data, dims):
    """Boolean mask (shape dims) of the elements an encoded selection defines; tag name."""
    n = int(np.prod(dims))
    mask = np.zeros(n, dtype=bool)
    tag = data[0]
    r = _Reader(data, 1)
    if tag == 0:
        pass
    elif tag == 1:
        mask[:] = True
    elif tag == 2:
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8, offset=1), bitorder="little")
        mask[:] = bits[:n].astype(bool)
        r.pos = len(data)
    elif tag == 3:
        count = r.next()
        nxt = 0
        for _ in range(count):
            nxt += r.next()
            mask[nxt] = True
            nxt += 1
    elif tag == 4:
        count = r.next()
        nxt = 0
        for _ in range(count):
            gap = r.next()
            length = r.next() + 1
            mask[nxt + gap:nxt + gap + length] = True
            nxt += gap + length
    elif tag == 5:
        count = r.next()
        m = mask.reshape(dims)
        for _ in range(count):
            box = []
            for _d in dims:
                start = r.next()
                box.append(slice(start, start + r.next() + 1))
            m[tuple(box)] = True
    elif tag == 6:
        count = r.next()
        k = data[r.pos]
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8, offset=r.pos + 1), bitorder="little")
        pos = nxt = 0
        for _ in range(count):
            q = 0
            while bits[pos]:
                q += 1
                pos += 1
            pos += 1
            low = sum(int(bits[pos + b]) << b for b in range(k))
            pos += k
            nxt += q << k | low
            mask[nxt] = True
            nxt += 1
        if (pos + 7) // 8 != len(bits) // 8 or bits[pos:].any():
            raise ValueError("rice offsets: wrong length or nonzero padding")
        r.pos = len(data)
    else:
        raise ValueError(f"unknown selection tag {tag}")
    if r.pos != len(data):
        raise ValueError("trailing bytes after the encoded selection")
    return mask.reshape(dims), TAGS[tag]
