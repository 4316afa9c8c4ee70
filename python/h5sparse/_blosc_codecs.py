"""The codecs inside c-blosc 1.x blocks, for the connector-free reader (vl_chunks.py): zlib
through Python; LZ4, Snappy and Zstd through the system's own libraries (liblz4, libsnappy,
libzstd, which libblosc1 depends on) by ctypes, so no Python package is needed; BloscLZ here,
because c-blosc keeps it internal (blosclz.c's format, decoded by our own loop).

decode_block(codec, src, size) returns exactly `size` bytes or raises CorruptChunkError;
MissingCodecError when a library cannot be loaded or the codec number is unknown."""
import ctypes
import ctypes.util
import zlib

from ._chunk_errors import CorruptChunkError, MissingCodecError

NAMES = {0: "BloscLZ", 1: "LZ4", 2: "Snappy", 3: "zlib", 4: "Zstd"}  # c-blosc's format codes

_MAX_DISTANCE = 8191  # BloscLZ: a match whose 13-bit distance field is full continues in 16 bits


def blosclz(src, size):
    """A BloscLZ stream decoded (a FastLZ level-2 descendant). Tokens: a control byte whose top
    3 bits are 0 starts a literal run of (ctrl & 31) + 1 bytes; otherwise a match of length
    (ctrl >> 5) + 2 (7 adds bytes up to one below 255) at distance ((ctrl & 31) << 8) + the
    next byte + 1, where a full field (31, 255) is followed by a 16-bit distance added to 8191.
    As c-blosc does, a match that ends the stream is not copied (the encoder ends on a literal,
    so the result is short and fails the size check)."""
    out = bytearray()
    end = len(src)
    if end == 0:
        return bytes(out)
    ip = 1
    ctrl = src[0] & 31
    while True:
        if ctrl < 32:  # a literal run
            n = ctrl + 1
            if ip + n > end or len(out) + n > size:
                raise CorruptChunkError("BloscLZ literal run past the end of its input or output")
            out += src[ip:ip + n]
            ip += n
            if ip >= end:
                break
            ctrl = src[ip]
            ip += 1
            continue
        length = (ctrl >> 5) - 1
        distance = (ctrl & 31) << 8
        if ip + 1 >= end:
            raise CorruptChunkError("BloscLZ match past the end of its input")
        if length == 6:
            while True:
                code = src[ip]
                ip += 1
                length += code
                if code != 255:
                    break
                if ip + 1 >= end:
                    raise CorruptChunkError("BloscLZ match length past the end of its input")
        code = src[ip]
        ip += 1
        length += 3
        distance += code
        if code == 255 and distance == (31 << 8) + 255:
            if ip + 1 >= end:
                raise CorruptChunkError("BloscLZ long match distance past the end of its input")
            distance = (src[ip] << 8 | src[ip + 1]) + _MAX_DISTANCE
            ip += 2
        start = len(out) - distance - 1
        if start < 0 or len(out) + length > size:
            raise CorruptChunkError("BloscLZ match before the start or past the end of its output")
        if ip >= end:
            break
        ctrl = src[ip]
        ip += 1
        if distance + 1 >= length:
            out += out[start:start + length]
        else:  # overlapping: the copy repeats the last distance + 1 bytes
            period = out[start:]
            out += (period * (length // len(period) + 1))[:length]
    return bytes(out)


def _library(name):
    """A codec's shared library, loaded once (its soname, found as ldconfig knows it)."""
    if name not in _libraries:
        path = ctypes.util.find_library(name)
        try:
            _libraries[name] = ctypes.CDLL(path or f"lib{name}.so.1")
        except OSError:
            raise MissingCodecError(f"the {name} library (lib{name}) is not installed") from None
    return _libraries[name]


_libraries = {}


def _lz4(src, size):
    lib = _library("lz4")
    out = ctypes.create_string_buffer(size)
    n = lib.LZ4_decompress_safe(src, out, ctypes.c_int(len(src)), ctypes.c_int(size))
    if n < 0:
        raise CorruptChunkError("LZ4 block does not decode")
    return out.raw[:n]


def _snappy(src, size):
    lib = _library("snappy")
    out = ctypes.create_string_buffer(size)
    length = ctypes.c_size_t(size)
    if lib.snappy_uncompress(src, ctypes.c_size_t(len(src)), out, ctypes.byref(length)) != 0:
        raise CorruptChunkError("Snappy block does not decode")
    return out.raw[:length.value]


def _zstd(src, size):
    lib = _library("zstd")
    lib.ZSTD_decompress.restype = ctypes.c_size_t
    lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
    out = ctypes.create_string_buffer(size)
    n = lib.ZSTD_decompress(out, ctypes.c_size_t(size), src, ctypes.c_size_t(len(src)))
    if lib.ZSTD_isError(n):
        raise CorruptChunkError("Zstd block does not decode")
    return out.raw[:n]


_DECODERS = {0: blosclz, 1: _lz4, 2: _snappy, 3: lambda src, size: zlib.decompress(src), 4: _zstd}


def decode_block(codec, src, size):
    if codec not in _DECODERS:
        raise MissingCodecError(f"Blosc frame compressed with codec {codec}, unknown to this reader")
    try:
        data = _DECODERS[codec](bytes(src), size)
    except zlib.error as e:
        raise CorruptChunkError(f"zlib block does not decode ({e})") from None
    if len(data) != size:
        raise CorruptChunkError(f"{NAMES[codec]} block decodes to {len(data)} bytes, not {size}")
    return data
