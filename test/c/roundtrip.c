/* roundtrip: write and read back through our Blosc (32001) and LZF (32000) plugins from C,
 * for every compressor, clevel {0, 1, 9}, shuffle {none, byte, bit}, element sizes 1, 2, 4, 8
 * and 13 (an opaque type), chunks of one element up to over 4 MiB (and one over 64 MiB), and shapes with partial
 * edge chunks. Its purpose is the sanitizer build: there the plugins are instrumented and
 * this program drives their encode and decode paths with many buffer sizes.
 *
 * Checks: values read back exactly (datasets reopened without a chunk cache, so reads
 * decode the stored chunks); clevel 0 and incompressible chunks are stored raw with the
 * filter-mask bit set, and the raw chunk (H5Dread_chunk) equals the data; compressible 1-D
 * chunks of 4 KiB and more are stored filtered. HDF5_PLUGIN_PATH must name our plugin
 * directory. Exit status 0 when every check passed. */
#include <hdf5.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

#define FILTER_LZF 32000
#define FILTER_BLOSC 32001


static uint64_t g_rng = 88172645463325252ull;
static unsigned char rnd_byte(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (unsigned char)(g_rng >> 32);
}


typedef struct {
  const char* name;
  size_t size;
} Type;

static hid_t make_type(const Type* t) {
  switch (t->size) {
    case 1: return H5Tcopy(H5T_STD_U8LE);
    case 2: return H5Tcopy(H5T_STD_I16LE);
    case 4: return H5Tcopy(H5T_IEEE_F32LE);
    case 8: return H5Tcopy(H5T_IEEE_F64LE);
    default: {
      hid_t opaque = H5Tcreate(H5T_OPAQUE, t->size);
      H5Tset_tag(opaque, "thirteen bytes");
      return opaque;
    }
  }
}

/* Element i: runs of 8 equal elements cycling through 61 values (compressible with or without
 * shuffle), or random bytes. Built byte-wise so any element size works. */
static void fill(unsigned char* buf, size_t n, size_t size, int random) {
  for (size_t i = 0; i < n; ++i) {
    const size_t v = (i / 8) % 61 + (i / 488) % 3;
    for (size_t b = 0; b < size; ++b)
      buf[i * size + b] = random ? rnd_byte() : (unsigned char)((v * 131 + b * 7 + (b == size - 1) * v) & 0xFF);
  }
}

typedef struct {
  int rank;
  hsize_t dims[2];
  hsize_t chunk[2];
} Shape;

static size_t count(const hsize_t* d, int rank) {
  size_t n = 1;
  for (int i = 0; i < rank; ++i) n *= (size_t)d[i];
  return n;
}

/* The full (zero-padded) chunk at `offset` of a rank-1 or rank-2 dataset. */
static void expected_chunk(const unsigned char* data, const Shape* s, size_t esize, const hsize_t* offset,
                           unsigned char* out) {
  const hsize_t rows = s->rank == 2 ? s->chunk[0] : 1, cols = s->rank == 2 ? s->chunk[1] : s->chunk[0];
  const hsize_t nrows = s->rank == 2 ? s->dims[0] : 1, ncols = s->rank == 2 ? s->dims[1] : s->dims[0];
  const hsize_t r0 = s->rank == 2 ? offset[0] : 0, c0 = s->rank == 2 ? offset[1] : offset[0];
  memset(out, 0, (size_t)(rows * cols) * esize);
  for (hsize_t r = 0; r < rows && r0 + r < nrows; ++r)
    for (hsize_t c = 0; c < cols && c0 + c < ncols; ++c)
      memcpy(out + (size_t)(r * cols + c) * esize, data + (size_t)((r0 + r) * ncols + c0 + c) * esize, esize);
}

typedef struct {
  int filter;
  unsigned clevel, shuffle, compressor; /* blosc only */
} Codec;

static void codec_name(const Codec* c, char* out, size_t n) {
  static const char* comps[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
  static const char* shuffles[] = {"none", "byte", "bit"};
  if (c->filter == FILTER_LZF)
    snprintf(out, n, "lzf");
  else
    snprintf(out, n, "blosc-%s-%u-%s", comps[c->compressor], c->clevel, shuffles[c->shuffle]);
}

static int g_case;

static void run_case(hid_t file, const Codec* codec, const Type* type, const Shape* shape, int random) {
  char label[256], cname[64], dname[32];
  codec_name(codec, cname, sizeof cname);
  char dims[48], chunk[48];
  if (shape->rank == 2) {
    snprintf(dims, sizeof dims, "%llux%llu", (unsigned long long)shape->dims[0], (unsigned long long)shape->dims[1]);
    snprintf(chunk, sizeof chunk, "%llux%llu", (unsigned long long)shape->chunk[0],
             (unsigned long long)shape->chunk[1]);
  } else {
    snprintf(dims, sizeof dims, "%llu", (unsigned long long)shape->dims[0]);
    snprintf(chunk, sizeof chunk, "%llu", (unsigned long long)shape->chunk[0]);
  }
  snprintf(label, sizeof label, "%s %s %s%s dims %s chunk %s", cname, type->name, random ? "random " : "",
           shape->rank == 2 ? "2-D" : "1-D", dims, chunk);
  snprintf(dname, sizeof dname, "d%d", g_case++);

  const size_t n = count(shape->dims, shape->rank), esize = type->size;
  const size_t cbytes = count(shape->chunk, shape->rank) * esize;
  unsigned char* data = malloc(n * esize);
  unsigned char* back = malloc(n * esize);
  unsigned char* want = malloc(cbytes);
  unsigned char* raw = malloc(cbytes + 64);
  fill(data, n, esize, random);

  hid_t tid = make_type(type);
  hid_t space = H5Screate_simple(shape->rank, shape->dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, shape->rank, shape->chunk);
  unsigned cd[7] = {0, 0, 0, 0, codec->clevel, codec->shuffle, codec->compressor};
  H5Pset_filter(dcpl, (H5Z_filter_t)codec->filter, H5Z_FLAG_OPTIONAL, codec->filter == FILTER_BLOSC ? 7 : 0, cd);
  hid_t dset = H5Dcreate2(file, dname, tid, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check(dset >= 0, "%s: H5Dcreate2", label);
  check(H5Dwrite(dset, tid, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, "%s: H5Dwrite", label);
  H5Dclose(dset);
  H5Fflush(file, H5F_SCOPE_LOCAL);

  hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
  H5Pset_chunk_cache(dapl, 0, 0, 1.0);
  dset = H5Dopen2(file, dname, dapl);
  H5Pclose(dapl);
  memset(back, 0xEE, n * esize);
  check(H5Dread(dset, tid, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0 && memcmp(back, data, n * esize) == 0,
        "%s: values do not read back", label);

  /* Storage of every chunk. */
  hsize_t nchunks = 0;
  H5Dget_num_chunks(dset, H5S_ALL, &nchunks);
  const int must_compress = !random && codec->clevel > 0 && cbytes >= 4096 && shape->rank == 1 &&
                            !(codec->filter == FILTER_BLOSC && codec->compressor == 3 && esize == 1);
  int raw_chunks = 0;
  for (hsize_t i = 0; i < nchunks; ++i) {
    hsize_t offset[2] = {0, 0}, size = 0;
    unsigned mask = 0;
    haddr_t addr = 0;
    check(H5Dget_chunk_info(dset, H5S_ALL, i, offset, &mask, &addr, &size) >= 0, "%s: chunk info", label);
    expected_chunk(data, shape, esize, offset, want);
    if (mask & 1) {
      ++raw_chunks;
      uint32_t m = 0;
      check(size == cbytes && H5Dread_chunk(dset, H5P_DEFAULT, offset, &m, raw) >= 0 && m == 1 &&
                memcmp(raw, want, cbytes) == 0,
            "%s: raw chunk %llu is not the data", label, (unsigned long long)i);
    } else {
      check(size < cbytes, "%s: filtered chunk %llu is not smaller", label, (unsigned long long)i);
    }
  }
  if (codec->filter == FILTER_BLOSC && codec->clevel == 0)
    check(raw_chunks == (int)nchunks, "%s: clevel 0 but %d of %llu chunks filtered", label,
          (int)nchunks - raw_chunks, (unsigned long long)nchunks);
  if (random && cbytes >= 64 && (shape->dims[0] % shape->chunk[0]) == 0)
    check(raw_chunks == (int)nchunks, "%s: random data but %d chunks filtered", label, (int)nchunks - raw_chunks);
  if (must_compress)
    check(raw_chunks == 0, "%s: %d of %llu compressible chunks stored raw", label, raw_chunks,
          (unsigned long long)nchunks);

  H5Dclose(dset);
  H5Ldelete(file, dname, H5P_DEFAULT); /* keeps the file small */
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Tclose(tid);
  free(data);
  free(back);
  free(want);
  free(raw);
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "roundtrip.h5";
  check(H5Zfilter_avail(FILTER_BLOSC) > 0 && H5Zfilter_avail(FILTER_LZF) > 0,
        "the plugins are not available (HDF5_PLUGIN_PATH?)");
  check(mapped("libh5sparse_blosc.so") && mapped("libh5sparse_lzf.so"), "our plugins are not the ones loaded");
  check(!mapped("libH5Zblosc.so") && !mapped("libblosc_filter.so"), "a peer Blosc plugin is loaded");
  if (g_failures) return 1;
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return 1;

  const Type types[] = {{"u8", 1}, {"i16", 2}, {"f32", 4}, {"f64", 8}, {"opaque13", 13}};
  const Shape small[] = {
      {1, {10000, 0}, {4096, 0}},  /* two full chunks, one partial */
      {2, {103, 57}, {40, 16}},    /* partial edges on both axes */
      {1, {1, 0}, {1, 0}},         /* a single element */
      {1, {37, 0}, {1, 0}},        /* one-element chunks */
      {1, {1000, 0}, {7, 0}},      /* tiny odd chunks */
  };
  const Shape big = {1, {700000, 0}, {600000, 0}}; /* chunks over 4 MiB for 8-byte types */
  const Shape random_shape = {1, {3 * 2048, 0}, {2048, 0}};

  Codec codecs[64];
  int ncodecs = 0;
  const unsigned clevels[] = {0, 1, 9};
  for (unsigned comp = 0; comp <= 5; ++comp)
    for (int l = 0; l < 3; ++l)
      for (unsigned sh = 0; sh <= 2; ++sh) codecs[ncodecs++] = (Codec){FILTER_BLOSC, clevels[l], sh, comp};
  codecs[ncodecs++] = (Codec){FILTER_LZF, 0, 0, 0};

  for (int c = 0; c < ncodecs; ++c)
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
      /* Every shape for the full matrix on the first two shapes; the tiny ones once per
       * compressor and clevel, with byte shuffle. */
      for (size_t s = 0; s < sizeof small / sizeof small[0]; ++s)
        if (s < 2 || codecs[c].shuffle == 1 || codecs[c].filter == FILTER_LZF)
          run_case(file, &codecs[c], &types[t], &small[s], 0);
      if (codecs[c].clevel == 9 || codecs[c].filter == FILTER_LZF)
        run_case(file, &codecs[c], &types[t], &random_shape, 1);
    }
  /* Big chunks: a few codecs, 8-byte and 13-byte elements. */
  const Codec big_codecs[] = {{FILTER_BLOSC, 5, 1, 1}, {FILTER_BLOSC, 3, 2, 5}, {FILTER_BLOSC, 1, 0, 0},
                              {FILTER_LZF, 0, 0, 0}};
  for (size_t c = 0; c < sizeof big_codecs / sizeof big_codecs[0]; ++c) {
    run_case(file, &big_codecs[c], &types[3], &big, 0);
    run_case(file, &big_codecs[c], &types[4], &big, 0);
  }
  /* A chunk over 64 MiB (68 MB): compressed into a one-off buffer, none kept for the thread. */
  const Shape huge = {1, {8500000, 0}, {8500000, 0}};
  const Codec huge_codec = {FILTER_BLOSC, 1, 1, 1};
  run_case(file, &huge_codec, &types[3], &huge, 0);

  H5Fclose(file);
  remove(path);
  printf("%d datasets, %d checks, %d failed\n", g_case, g_checks, g_failures);
  return g_failures ? 1 : 0;
}
