"""The Lifeboat benchmark's three selection patterns, section 0 sizes against theirs and the entropy bound.

One 1024x1024 uint8 sparse dataset per (pattern, section-0 pipeline), chunk = the whole
dataset, about 10% of the elements defined:
  1. random points per row: 102 distinct random columns in every row (104,448 elements);
  2. one rectangle: rows 350-673 x columns 350-673 (324 x 324 = 104,976 elements);
  3. one run per row: 102 consecutive columns from a random start in every row.
Each pattern is written through the connector with the selection a user would use for it
(an element selection, a slice, a union of hyperslabs), checked with get_defined, then the raw
chunk is read with H5Dread_chunk (read_direct_chunk) and section 0's stored and unfiltered
sizes are parsed from the header by chunkfmt.py (independent of the C++ core), which also
decodes section 0 where the standard library can undo the pipeline and compares it with the
pattern.
"""
import math
import os

import h5py
import numpy as np

import h5sparse

import chunkfmt

N = 1024
K = 102                      # defined columns per row (patterns 1 and 3): 10% of 1024
RECT = (350, 350, 324, 324)  # row, column, height, width (pattern 2): 10.01%

# Published sizes of the encoded selection (Lifeboat's sparse-chunk prototype, the issue).
LIFEBOAT = {"points": (1654231, 184324), "rectangle": (87, 51), "runs": (16439, 6718)}
TARGET_UNFILTERED = {"points": 131072, "rectangle": 64, "runs": 4200}
TARGET_BOUND_RATIO = 1.2     # pattern 1 with a section-0 filter, against its entropy bound

PATTERNS = [("points", "random points per row"), ("rectangle", "one rectangle"), ("runs", "one run per row")]

PIPELINES = [
    ("none", "no filter", None, []),
    ("deflate9", "Deflate(9)", lambda: h5sparse.Deflate(9), [(1, (9,))]),
    ("zstd9bit", "Blosc zstd 9 bit", lambda: h5sparse.Blosc("zstd", 9, "bit"), [(32001, (0, 0, 0, 0, 9, 2, 5))]),
    ("shuf_deflate9", "Shuffle+Deflate(9)", lambda: [h5sparse.Shuffle(), h5sparse.Deflate(9)],
     [(2, ()), (1, (9,))]),
]


def make_patterns(seed=20240521):
    rng = np.random.default_rng(seed)
    masks = {}
    m = np.zeros((N, N), dtype=bool)
    for r in range(N):
        m[r, rng.choice(N, K, replace=False)] = True
    masks["points"] = m
    m = np.zeros((N, N), dtype=bool)
    r0, c0, h, w = RECT
    m[r0:r0 + h, c0:c0 + w] = True
    masks["rectangle"] = m
    starts = rng.integers(0, N - K + 1, size=N)
    m = np.zeros((N, N), dtype=bool)
    for r, s in enumerate(starts):
        m[r, s:s + K] = True
    masks["runs"] = m
    values = rng.integers(1, 256, size=(N, N), dtype=np.uint8)
    return masks, starts, values


def entropy_bound_bits(name, mask):
    """Bits needed to tell this selection apart from all others of its family (see report)."""
    if name == "points":   # each row: which k of the 1024 columns
        return sum(math.log2(math.comb(N, int(k))) for k in mask.sum(axis=1))
    if name == "rectangle":  # four coordinates of 0..1023
        return 4 * math.log2(N)
    if name == "runs":     # each row: where the run of K starts
        return N * math.log2(N - K + 1)
    raise KeyError(name)


def write_pattern(dset, name, mask, starts, values):
    """Defines exactly `mask` through the connector, the way a user would select it."""
    if name == "points":
        coords = np.argwhere(mask).astype(np.uint64)  # row-major
        fspace = dset.id.get_space()
        fspace.select_elements(coords)
        vals = np.ascontiguousarray(values[mask])
        dset.id.write(h5py.h5s.create_simple((len(vals),)), fspace, vals)
    elif name == "rectangle":
        r0, c0, h, w = RECT
        dset[r0:r0 + h, c0:c0 + w] = values[r0:r0 + h, c0:c0 + w]
    elif name == "runs":
        fspace = dset.id.get_space()
        fspace.select_none()
        for r, s in enumerate(starts):
            fspace.select_hyperslab((r, int(s)), (1, K), op=h5py.h5s.SELECT_OR)
        vals = np.ascontiguousarray(values[mask])  # row-major = selection order
        dset.id.write(h5py.h5s.create_simple((len(vals),)), fspace, vals)


def run(workdir, log):
    masks, starts, values = make_patterns()
    path = os.path.join(workdir, "lifeboat.h5")
    results = []
    with h5py.File(path, "w") as f:
        if h5sparse.connector_version(f) is None:
            raise SystemExit("the h5sparse VOL connector is not active (run through scripts/dev run)")
        for name, _title in PATTERNS:
            mask = masks[name]
            bound_bits = entropy_bound_bits(name, mask)
            for key, _label, make, pipeline in PIPELINES:
                dset = f.create_dataset(f"{name}_{key}", shape=(N, N), dtype="u1", chunks=(N, N),
                                        **h5sparse.Sparse(selection=make() if make else None))
                write_pattern(dset, name, mask, starts, values)
                defined = h5sparse.get_defined(dset)
                got = np.zeros((N, N), dtype=bool)
                got[defined[:, 0].astype(np.intp), defined[:, 1].astype(np.intp)] = True
                if not np.array_equal(got, mask):
                    raise SystemExit(f"{name}/{key}: get_defined differs from the written pattern")
                filter_mask, raw = dset.id.read_direct_chunk((0, 0))
                s0, s1 = chunkfmt.parse_chunk(raw)
                rec = {"pattern": name, "pipeline": key, "defined": int(mask.sum()),
                       "s0_stored": s0.stored_size, "s0_unfiltered": s0.unfiltered_size,
                       "s0_mask": s0.filter_mask, "s1_stored": s1.stored_size, "chunk": len(raw),
                       "bound_bits": bound_bits, "hdf5_filter_mask": filter_mask}
                plain = chunkfmt.unfilter(s0, pipeline)
                if plain is not None:
                    decoded, tag = chunkfmt.decode_selection(plain, (N, N))
                    if not np.array_equal(decoded, mask):
                        raise SystemExit(f"{name}/{key}: section 0 decodes to a different selection")
                    rec["encoding"] = tag
                    rec["verified"] = "decoded"
                elif pipeline and pipeline[0][0] == 32001 and not s0.filter_mask & 1:
                    nbytes, cbytes = chunkfmt.blosc_frame_sizes(s0.data)
                    if nbytes != s0.unfiltered_size or cbytes != s0.stored_size:
                        raise SystemExit(f"{name}/{key}: blosc frame sizes disagree with the header")
                    rec["verified"] = "blosc frame sizes"
                # Section 1 must hold the values of the defined elements, row-major.
                if s1.filter_mask in (0, chunkfmt.ALL_SKIPPED) and not s1.data == np.ascontiguousarray(values[mask]).tobytes():
                    raise SystemExit(f"{name}/{key}: section 1 does not hold the written values")
                results.append(rec)
                log(f"lifeboat {name:9s} {key:14s} section 0: {s0.stored_size} B stored, "
                    f"{s0.unfiltered_size} B unfiltered, mask {s0.filter_mask}")
    os.remove(path)
    return results


def fmt_int(n):
    return f"{n:,}"


def report(results):
    by = {(r["pattern"], r["pipeline"]): r for r in results}
    lines = []
    lines.append("#### Section 0 (encoded selection) of one 1024x1024 uint8 chunk, 10% defined\n")
    lines.append("Bytes of section 0 as stored (the chunk header and section 1, the 104-105 KB of "
                 "values, are not counted). Lifeboat = their published size without / with gzip.\n")
    header = ["pattern", "defined", "encoding", "Lifeboat", "Lifeboat gzip", "entropy bound",
              "ours, no filter", "target", "met"]
    for _key, label, _m, _p in PIPELINES[1:]:
        header.append(f"ours, {label}")
    header.append("best filtered / bound")
    rows = []
    verdicts = []
    for name, title in PATTERNS:
        plain = by[(name, "none")]
        bound = math.ceil(plain["bound_bits"] / 8)
        lb, lbz = LIFEBOAT[name]
        target = TARGET_UNFILTERED[name]
        met = plain["s0_stored"] <= target
        verdicts.append((f"{title}: unfiltered section 0 <= {fmt_int(target)} B", met,
                         f"{fmt_int(plain['s0_stored'])} B"))
        row = [title, fmt_int(plain["defined"]), plain.get("encoding", "?"), fmt_int(lb), fmt_int(lbz),
               fmt_int(bound), fmt_int(plain["s0_stored"]), f"<= {fmt_int(target)}", "yes" if met else "**no**"]
        best = None
        for key, _label, _m, _p in PIPELINES[1:]:
            r = by[(name, key)]
            skipped = " (skipped)" if r["s0_mask"] & 1 and r["s0_unfiltered"] > 0 else ""
            row.append(fmt_int(r["s0_stored"]) + skipped)
            best = r["s0_stored"] if best is None else min(best, r["s0_stored"])
        row.append(f"{best / bound:.2f}x")
        rows.append(row)
        if name == "points":
            verdicts.append((f"{title}: with a section-0 filter <= {TARGET_BOUND_RATIO}x the entropy bound "
                             f"({fmt_int(bound)} B)", best <= TARGET_BOUND_RATIO * bound,
                             f"best {fmt_int(best)} B = {best / bound:.3f}x"))
    lines.append(md_table(header, rows, right_from=1))
    lines.append("")
    lines.append("Entropy bounds: random points per row = sum over rows of log2(C(1024, k_row)) bits with "
                 "k_row = 102 (math.comb, exact); one rectangle = 4 coordinates of 10 bits = 40 bits; one run "
                 "per row = 1024 x log2(1024 - 102 + 1) bits (the start of each 102-long run). Rounded up to "
                 "whole bytes. \"(skipped)\": the optional filter did not shrink the section, so it is "
                 "stored unfiltered with its mask bit set.")
    lines.append("")
    lines.append("| target | met | measured |\n|---|---|---|")
    for text, ok, measured in verdicts:
        lines.append(f"| {text} | {'yes' if ok else '**no**'} | {measured} |")
    return "\n".join(lines) + "\n", verdicts


def md_table(header, rows, right_from=1):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i < right_from else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)
