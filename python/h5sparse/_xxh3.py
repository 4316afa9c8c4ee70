"""XXH3-64 (seed 0, default secret) in Python and numpy: the checksum of h5sparse's structured
chunks (docs/FORMAT.md), so that the connector-free reader (vl_chunks.py) verifies chunks
without a C extension. Follows xxhash.h 0.8 (XXH3_64bits); tested against libxxhash itself.
Inputs above 240 bytes go stripe by stripe as numpy lanes, a block (16 stripes) at a time."""
import numpy as np

_M64 = 0xFFFFFFFFFFFFFFFF
_P32_1, _P32_2, _P32_3 = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D
_P64_1, _P64_2, _P64_3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
_P64_4, _P64_5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
_PRIME_MX1, _PRIME_MX2 = 0x165667919E3779F9, 0x9FB21C651E98DF25

_SECRET = bytes.fromhex(
    "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
    "cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c"
    "3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8"
    "a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364"
    "eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e"
    "2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e")
_STRIPE, _STRIPES_PER_BLOCK = 64, (len(_SECRET) - 64) // 8
_BLOCK = _STRIPE * _STRIPES_PER_BLOCK


def _u64(b, at):
    return int.from_bytes(b[at:at + 8], "little")


def _u32(b, at):
    return int.from_bytes(b[at:at + 4], "little")


def _fold(a, b):
    product = a * b
    return (product ^ (product >> 64)) & _M64


def _xxh64_avalanche(h):
    h ^= h >> 33
    h = h * _P64_2 & _M64
    h ^= h >> 29
    h = h * _P64_3 & _M64
    return h ^ (h >> 32)


def _avalanche(h):
    h ^= h >> 37
    h = h * _PRIME_MX1 & _M64
    return h ^ (h >> 32)


def _rotl(h, r):
    return ((h << r) | (h >> (64 - r))) & _M64


def _mix16(data, at, secret_at):
    return _fold(_u64(data, at) ^ _u64(_SECRET, secret_at), _u64(data, at + 8) ^ _u64(_SECRET, secret_at + 8))


def _short(data):
    n = len(data)
    if n == 0:
        return _xxh64_avalanche(_u64(_SECRET, 56) ^ _u64(_SECRET, 64))
    if n <= 3:
        combined = (data[0] << 16) | (data[n >> 1] << 24) | data[n - 1] | (n << 8)
        return _xxh64_avalanche(combined ^ (_u32(_SECRET, 0) ^ _u32(_SECRET, 4)))
    if n <= 8:
        h = (_u32(data, n - 4) + (_u32(data, 0) << 32)) ^ (_u64(_SECRET, 8) ^ _u64(_SECRET, 16))
        h ^= _rotl(h, 49) ^ _rotl(h, 24)
        h = h * _PRIME_MX2 & _M64
        h ^= (h >> 35) + n
        h = h * _PRIME_MX2 & _M64
        return h ^ (h >> 28)
    lo = _u64(data, 0) ^ (_u64(_SECRET, 24) ^ _u64(_SECRET, 32))
    hi = _u64(data, n - 8) ^ (_u64(_SECRET, 40) ^ _u64(_SECRET, 48))
    swapped = int.from_bytes(lo.to_bytes(8, "little"), "big")
    return _avalanche((n + swapped + hi + _fold(lo, hi)) & _M64)


def _medium(data):
    n = len(data)
    acc = n * _P64_1 & _M64
    if n <= 128:
        for i in range(4):  # pairs of 16-byte lanes from both ends, as far as the input reaches
            if n > 32 * i:
                acc += _mix16(data, 16 * i, 32 * i) + _mix16(data, n - 16 * (i + 1), 32 * i + 16)
        return _avalanche(acc & _M64)
    for i in range(8):
        acc += _mix16(data, 16 * i, 16 * i)
    acc = _avalanche(acc & _M64)
    end = _mix16(data, n - 16, 136 - 17)
    for i in range(8, n // 16):
        end += _mix16(data, 16 * i, 16 * (i - 8) + 3)
    return _avalanche((acc + end) & _M64)


_STRIPE_KEYS = np.stack([np.frombuffer(_SECRET[8 * s:8 * s + 64], "<u8") for s in range(_STRIPES_PER_BLOCK)])
_SCRAMBLE_KEY = np.frombuffer(_SECRET[-64:], "<u8")
_LAST_KEY = np.frombuffer(_SECRET[len(_SECRET) - 64 - 7:len(_SECRET) - 7], "<u8")
_LOW32 = np.uint64(0xFFFFFFFF)


def _accumulate(acc, lanes, keys):
    """Adds stripes (k x 8 words) with their keys (k x 8) to the accumulators (mod 2^64)."""
    mixed = lanes ^ keys
    product = (mixed & _LOW32) * (mixed >> np.uint64(32))
    swapped = lanes.reshape(-1, 4, 2)[:, :, ::-1].reshape(-1, 8)  # lane i feeds accumulator i ^ 1
    with np.errstate(over="ignore"):
        return acc + product.sum(axis=0, dtype=np.uint64) + swapped.sum(axis=0, dtype=np.uint64)


def _long(data):
    n = len(data)
    acc = np.array([_P32_3, _P64_1, _P64_2, _P64_3, _P64_4, _P32_2, _P64_5, _P32_1], np.uint64)
    blocks = (n - 1) // _BLOCK
    words = np.frombuffer(data, "<u8", count=blocks * _BLOCK // 8).reshape(blocks, _STRIPES_PER_BLOCK, 8)
    with np.errstate(over="ignore"):
        for b in range(blocks):
            acc = _accumulate(acc, words[b], _STRIPE_KEYS)
            acc = (acc ^ (acc >> np.uint64(47)) ^ _SCRAMBLE_KEY) * np.uint64(_P32_1)
    stripes = (n - 1 - blocks * _BLOCK) // _STRIPE
    if stripes:
        tail = np.frombuffer(data, "<u8", count=stripes * 8, offset=blocks * _BLOCK).reshape(stripes, 8)
        acc = _accumulate(acc, tail, _STRIPE_KEYS[:stripes])
    acc = _accumulate(acc, np.frombuffer(data, "<u8", count=8, offset=n - 64).reshape(1, 8), _LAST_KEY)
    result = n * _P64_1 & _M64
    merge = np.frombuffer(_SECRET[11:11 + 64], "<u8")
    for i in range(4):
        result += _fold(int(acc[2 * i]) ^ int(merge[2 * i]), int(acc[2 * i + 1]) ^ int(merge[2 * i + 1]))
    return _avalanche(result & _M64)


def xxh3_64(data):
    """XXH3_64bits(data) with seed 0: an int below 2**64."""
    data = bytes(data)
    if len(data) <= 16:
        return _short(data)
    if len(data) <= 240:
        return _medium(data)
    return _long(data)
