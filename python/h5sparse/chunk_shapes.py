"""Chunk shapes for sparse matrices: one shape that serves reads of rows and of columns alike.

A read of one column decodes every chunk of that column of chunks, so its cost grows with the
chunk's width; a read of one row grows with the chunk's height; every chunk costs HDF5 a lookup
and a read besides its elements. matrix_chunks makes chunks about square in elements, holding
about `defined_per_chunk` defined elements each (16,384 by default: 64 KiB of float32 values
and about 15 KiB of selection), in powers of two. docs/DESIGN.md ("Chunk shapes for matrices")
has the measured trade-off, bench/cells/run.py the figures.
"""
import math

DEFINED_PER_CHUNK = 16384
MAX_CHUNK_ELEMENTS = 2**26  # a chunk's offsets are 32-bit; its bitmap, when one is made, 8 MiB


def matrix_chunks(shape, nnz, defined_per_chunk=DEFINED_PER_CHUNK):
    """(rows, columns) of the chunks of a `shape` matrix expected to hold `nnz` defined elements:
    powers of two (or the matrix's own extent when smaller), rows x columns about
    defined_per_chunk / density, one side the power of two nearest the square root, the other
    the rest, the rows the shorter (row bands, the reads of cells and loaders, stay short)."""
    if len(shape) != 2 or min(int(n) for n in shape) < 1:
        raise ValueError(f"matrix_chunks takes the shape of a non-empty 2-D matrix, got {tuple(shape)!r}")
    if int(nnz) < 0 or int(defined_per_chunk) < 1:
        raise ValueError(f"nnz must be 0 or more and defined_per_chunk 1 or more, got {nnz!r}, {defined_per_chunk!r}")
    rows, cols = (int(n) for n in shape)
    density = max(int(nnz), 1) / (rows * cols)
    elements = min(max(int(defined_per_chunk) / density, 1.0), float(MAX_CHUNK_ELEMENTS))

    def rest(taken):  # the power of two that makes `elements` with `taken`
        return 2 ** max(int(round(math.log2(elements / taken))), 0)

    side = 2 ** int(round(math.log2(math.sqrt(elements))))
    chunk_rows, chunk_cols = min(rows, side, rest(side)), min(cols, max(side, rest(side)))
    if chunk_rows == rows and chunk_cols < cols:  # flat or narrow matrices: the rest to the other side
        chunk_cols = min(cols, rest(chunk_rows))
    elif chunk_cols == cols and chunk_rows < rows:
        chunk_rows = min(rows, rest(chunk_cols))
    return chunk_rows, chunk_cols
