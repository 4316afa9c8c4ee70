/* corrupt_chunks [--expect-plugin-records] [FILE]: the Blosc (32001) and LZF (32000)
 * plugins facing bad input.
 *
 * For every codec configuration it creates a one-chunk dataset through the plugin, checks it
 * reads back, takes the stored (compressed) chunk with H5Dread_chunk, and then stores damaged
 * versions of it with H5Dwrite_chunk (filter mask 0, so the plugin must decode them):
 * truncations, single bit flips at many positions, random multi-bit flips, garbage, an
 * empty chunk (HDF5 itself refuses to store one: that write must fail with an error record)
 * and, for Blosc, headers that lie about the sizes (a huge nbytes and friends).
 * Every H5Dread of such a chunk must either fail with a negative return and an error stack
 * holding H5Z_pipeline's "filter returned failure" record (with --expect-plugin-records, also
 * one of our "h5sparse" class: HDF5 1.14.5 pauses the error stack while a filter callback
 * runs, so records a filter pushes there are dropped), or, where a codec cannot
 * detect the damage (a bit flip in literal data), return without crashing. Damage that a
 * sound decoder always detects (bad sizes, truncation, garbage) must fail.
 *
 * Then invalid options at create time (clevel 10, shuffle 3, compressor 9) must make
 * H5Dcreate fail with our record on the stack, while the same call with valid options works.
 *
 * HDF5_PLUGIN_PATH must point at our plugin directory (and only there); the program checks
 * that the plugins it used were mapped from files named libh5sparse_*.so.
 * Exit status 0 when every check passed. Built with the sanitizers in the sanitize build.
 * CORRUPT_CHUNKS_VERBOSE=1 prints every error stack the checks inspect. */
#include <hdf5.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

#define FILTER_LZF 32000
#define FILTER_BLOSC 32001
#define NELEM 8192 /* one chunk of int32: 32 KiB */
#define CHUNK_BYTES (NELEM * 4)

static int g_expect_plugin_records; /* --expect-plugin-records */

/* ---- deterministic pseudo-random numbers ------------------------------------------------ */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng >> 11);
}

/* ---- error stack inspection ----------------------------------------------------------- */
typedef struct {
  int records;
  int ours;     /* records of the "h5sparse" class */
  int pipeline; /* H5Z_pipeline's "filter returned failure during read" */
  char first_ours[256];
} StackInfo;

static herr_t walk_cb(unsigned n, const H5E_error2_t* err, void* data) {
  (void)n;
  StackInfo* info = (StackInfo*)data;
  char cls[64] = "";
  ++info->records;
  if (err->func_name && strcmp(err->func_name, "H5Z_pipeline") == 0 && err->desc &&
      strstr(err->desc, "filter returned failure") != NULL)
    ++info->pipeline;
  if (H5Eget_class_name(err->cls_id, cls, sizeof cls) > 0 && strcmp(cls, "h5sparse") == 0) {
    if (info->ours++ == 0)
      snprintf(info->first_ours, sizeof info->first_ours, "%s: %s", err->func_name ? err->func_name : "?",
               err->desc ? err->desc : "?");
  }
  return 0;
}

/* Takes (and clears) the error stack left by the last failing call. */
static StackInfo take_stack(void) {
  StackInfo info;
  memset(&info, 0, sizeof info);
  hid_t stack = H5Eget_current_stack();
  if (stack < 0) return info;
  H5Ewalk2(stack, H5E_WALK_DOWNWARD, walk_cb, &info);
  if (getenv("CORRUPT_CHUNKS_VERBOSE") != NULL) H5Eprint2(stack, stderr);
  H5Eclose_stack(stack);
  return info;
}


/* ---- the data ------------------------------------------------------------------------- */
/* Compressible, but with random stretches so that LZF streams hold literal runs as well as
 * back references, and Blosc blocks hold both. */
static int32_t g_data[NELEM];
static int32_t g_read[NELEM];

static void make_data(void) {
  for (int i = 0; i < NELEM; ++i) g_data[i] = (i % 64 < 12) ? (int32_t)rnd() : (int32_t)(i / 16);
}

typedef struct {
  const char* name;
  int filter;
  unsigned cd[7];
  size_t ncd;
} Codec;

typedef struct {
  hid_t file;
  hid_t dset;
  const Codec* codec;
  unsigned char* orig; /* stored chunk as the plugin wrote it */
  size_t orig_size;
  /* tallies */
  int failed, failed_with_ours, passed_wrong, passed_same;
} Ctx;

enum Expect { MUST_FAIL, MAY_PASS };

/* Stores `size` bytes as the chunk (filter mask 0: "all filters applied"), then reads the
 * dataset. Checks the outcome; returns 1 when the read failed. */
static int try_chunk(Ctx* c, const unsigned char* bytes, size_t size, enum Expect expect, const char* what) {
  hsize_t offset[1] = {0};
  if (H5Dwrite_chunk(c->dset, H5P_DEFAULT, 0, offset, size, bytes) < 0) {
    StackInfo s = take_stack();
    /* HDF5 itself may refuse to store such a chunk (the plugin is not involved then). */
    check(s.records > 0, "%s %s: H5Dwrite_chunk failed without an error record", c->codec->name, what);
    ++c->failed;
    return 1;
  }
  memset(g_read, 0xA5, sizeof g_read);
  herr_t rc = H5Dread(c->dset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, g_read);
  if (rc < 0) {
    StackInfo s = take_stack();
    check(s.records > 0, "%s %s: H5Dread failed without an error record", c->codec->name, what);
    /* The failure must come from the filter itself, not from elsewhere in the read path. */
    check(s.pipeline > 0, "%s %s: H5Dread failed, but not because the filter reported failure (%d records)",
          c->codec->name, what, s.records);
    /* HDF5 1.14.5 pauses the error stack around filter callbacks, so what the plugin pushes
     * there is dropped; counted, and required only with --expect-plugin-records. */
    if (s.ours > 0) ++c->failed_with_ours;
    check(!g_expect_plugin_records || s.ours > 0,
          "%s %s: H5Dread failed but the stack has no h5sparse record (%d records)", c->codec->name, what,
          s.records);
    ++c->failed;
    return 1;
  }
  if (memcmp(g_read, g_data, sizeof g_data) == 0)
    ++c->passed_same;
  else
    ++c->passed_wrong;
  check(expect == MAY_PASS, "%s %s: H5Dread of a damaged chunk succeeded (returned %d)", c->codec->name, what,
        (int)rc);
  return 0;
}

static void put32(unsigned char* p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

static void run_codec(hid_t file, const Codec* codec) {
  char label[128];
  Ctx c;
  memset(&c, 0, sizeof c);
  c.file = file;
  c.codec = codec;

  /* Create and fill the dataset through the plugin. */
  hsize_t dims[1] = {NELEM};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, dims);
  check(H5Pset_filter(dcpl, (H5Z_filter_t)codec->filter, H5Z_FLAG_MANDATORY, codec->ncd, codec->cd) >= 0,
        "%s: H5Pset_filter", codec->name);
  hid_t dset = H5Dcreate2(file, codec->name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check(dset >= 0, "%s: H5Dcreate2 with valid options failed", codec->name);
  if (dset < 0) {
    H5Eprint2(H5E_DEFAULT, stderr);
    goto out;
  }
  check(H5Dwrite(dset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, g_data) >= 0, "%s: H5Dwrite",
        codec->name);
  H5Dclose(dset);

  /* Reopen without a chunk cache so that every read decodes the stored chunk. */
  hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
  H5Pset_chunk_cache(dapl, 0, 0, 1.0);
  c.dset = H5Dopen2(file, codec->name, dapl);
  H5Pclose(dapl);
  check(c.dset >= 0, "%s: H5Dopen2", codec->name);
  if (c.dset < 0) goto out;

  hsize_t offset[1] = {0};
  hsize_t stored = 0;
  check(H5Dget_chunk_storage_size(c.dset, offset, &stored) >= 0 && stored > 0 && stored < CHUNK_BYTES,
        "%s: the chunk was not stored compressed (%" PRIuHSIZE " bytes)", codec->name, stored);
  c.orig_size = (size_t)stored;
  c.orig = malloc(c.orig_size + 64);
  uint32_t mask = 0xFFFFFFFFu;
  check(H5Dread_chunk(c.dset, H5P_DEFAULT, offset, &mask, c.orig) >= 0, "%s: H5Dread_chunk", codec->name);
  check(mask == 0, "%s: the chunk's filter mask is %u, the filter did not run", codec->name, mask);
  memset(g_read, 0, sizeof g_read);
  check(H5Dread(c.dset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, g_read) >= 0 &&
            memcmp(g_read, g_data, sizeof g_data) == 0,
        "%s: the intact dataset does not read back", codec->name);

  unsigned char* buf = malloc(CHUNK_BYTES + 4096);
  const size_t n = c.orig_size;
  const int is_blosc = codec->filter == FILTER_BLOSC;

  /* Truncated streams. */
  const size_t cuts[] = {1, 2, 3, 8, 15, 16, 17, 31, 64, n / 4, n / 2, n - 16, n - 2, n - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
    if (cuts[i] == 0 || cuts[i] >= n) continue;
    snprintf(label, sizeof label, "truncated to %zu of %zu bytes", cuts[i], n);
    try_chunk(&c, c.orig, cuts[i], MUST_FAIL, label);
  }
  /* Trailing bytes after a valid stream. */
  memcpy(buf, c.orig, n);
  memset(buf + n, 0x5A, 16);
  try_chunk(&c, buf, n + 16, is_blosc ? MUST_FAIL : MAY_PASS, "16 trailing bytes");

  /* One bit flipped: every byte of the first 64, then about 1500 positions spread over the
   * rest, with the flipped bit varying. Counted, not required to fail. */
  int flips = 0, flips_failed = 0;
  const size_t stride = n > 1564 ? (n - 64) / 1500 + 1 : 1;
  for (size_t pos = 0; pos < n; pos += (pos < 64 ? 1 : stride)) {
    for (int bit = 0; bit < 8; bit += (pos < 64 ? 1 : 8)) {
      const int b = pos < 64 ? bit : (int)((pos * 5 + 3) % 8);
      memcpy(buf, c.orig, n);
      buf[pos] ^= (unsigned char)(1u << b);
      snprintf(label, sizeof label, "bit %d of byte %zu flipped", b, pos);
      /* Blosc: the size fields nbytes (bytes 4-7) and cbytes (12-15) are always checked. */
      const int must = is_blosc && ((pos >= 4 && pos < 8) || (pos >= 12 && pos < 16));
      /* LZF: the first byte is a literal-run control byte; its top 3 bits turned on make
       * it a back reference before the start of the output. */
      const int lzf_must = !is_blosc && pos == 0 && b >= 5;
      flips_failed += try_chunk(&c, buf, n, (must || lzf_must) ? MUST_FAIL : MAY_PASS, label);
      ++flips;
    }
  }

  /* Several random bits flipped at once. */
  for (int round = 0; round < 300; ++round) {
    memcpy(buf, c.orig, n);
    const int count = 2 + (int)(rnd() % 30);
    for (int k = 0; k < count; ++k) buf[rnd() % n] ^= (unsigned char)(1u << (rnd() % 8));
    snprintf(label, sizeof label, "%d random bits flipped (round %d)", count, round);
    flips_failed += try_chunk(&c, buf, n, MAY_PASS, label);
    ++flips;
  }

  /* Garbage of various sizes, and constant fills. */
  const size_t garbage_sizes[] = {1, 16, 17, 100, n, 5000, CHUNK_BYTES, CHUNK_BYTES + 100};
  for (size_t i = 0; i < sizeof garbage_sizes / sizeof garbage_sizes[0]; ++i) {
    const size_t gs = garbage_sizes[i];
    for (size_t k = 0; k < gs; ++k) buf[k] = (unsigned char)rnd();
    snprintf(label, sizeof label, "%zu bytes of garbage", gs);
    try_chunk(&c, buf, gs, MUST_FAIL, label);
  }
  memset(buf, 0, n);
  try_chunk(&c, buf, n, MUST_FAIL, "all zero bytes");
  memset(buf, 0xFF, n);
  try_chunk(&c, buf, n, MUST_FAIL, "all 0xFF bytes");

  /* An empty chunk. */
  try_chunk(&c, buf, 0, MUST_FAIL, "empty chunk");

  if (is_blosc) {
    /* Headers that lie. Layout: version, versionlz, flags, typesize, nbytes, blocksize, cbytes. */
    struct {
      int field; /* byte offset of a 32-bit field, or -1 for a byte at `byte` */
      uint32_t value;
      int byte;
      enum Expect expect;
      const char* what;
    } lies[] = {
        {4, 0xFFFFFFFFu, 0, MUST_FAIL, "nbytes 0xFFFFFFFF"},
        {4, 0x7FFFFFF0u, 0, MUST_FAIL, "nbytes 0x7FFFFFF0 (huge but under blosc's limit)"},
        {4, 0x80000000u, 0, MUST_FAIL, "nbytes 2 GiB"},
        {4, CHUNK_BYTES * 2, 0, MUST_FAIL, "nbytes twice the chunk"},
        {4, CHUNK_BYTES + 1, 0, MUST_FAIL, "nbytes one more than the chunk"},
        {4, CHUNK_BYTES - 1, 0, MUST_FAIL, "nbytes one less than the chunk"},
        {4, 0, 0, MUST_FAIL, "nbytes 0"},
        {12, 0xFFFFFFFFu, 0, MUST_FAIL, "cbytes 0xFFFFFFFF"},
        {12, 0, 0, MUST_FAIL, "cbytes 0"},
        {12, 16, 0, MUST_FAIL, "cbytes 16"},
        {8, 0, 0, MAY_PASS, "blocksize 0"},
        {8, 1, 0, MAY_PASS, "blocksize 1"},
        {8, 0xFFFFFFFFu, 0, MAY_PASS, "blocksize 0xFFFFFFFF"},
        {8, 0x7FFFFFF0u, 0, MAY_PASS, "blocksize 0x7FFFFFF0"},
        {-1, 0xFF, 0, MAY_PASS, "version 255"},
        {-1, 0, 0, MAY_PASS, "version 0"},
        {-1, 0xFF, 2, MAY_PASS, "flags 0xFF"},
        {-1, 0x02, 2, MAY_PASS, "flags: memcpyed"},
        {-1, 0x00, 3, MAY_PASS, "typesize 0"},
        {-1, 0xFF, 3, MAY_PASS, "typesize 255"},
    };
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; ++i) {
      memcpy(buf, c.orig, n);
      if (lies[i].field >= 0)
        put32(buf + lies[i].field, lies[i].value);
      else
        buf[lies[i].byte] = (unsigned char)lies[i].value;
      snprintf(label, sizeof label, "blosc header: %s", lies[i].what);
      try_chunk(&c, buf, n, lies[i].expect, label);
    }
    /* A bare header that claims a huge decoded size, and one that claims the right size with
     * no payload at all (memcpyed flag set, so blosc would copy nbytes from nowhere). */
    memcpy(buf, c.orig, 16);
    put32(buf + 4, 0x7FFFFFF0u);
    put32(buf + 12, 16);
    try_chunk(&c, buf, 16, MUST_FAIL, "bare 16-byte header claiming nbytes 0x7FFFFFF0");
    memcpy(buf, c.orig, 16);
    buf[2] |= 0x02;
    put32(buf + 4, CHUNK_BYTES);
    put32(buf + 12, 16);
    try_chunk(&c, buf, 16, MUST_FAIL, "bare memcpyed header claiming the full chunk");
    memcpy(buf, c.orig, 16);
    buf[2] |= 0x02;
    put32(buf + 4, CHUNK_BYTES);
    put32(buf + 12, 1000);
    memset(buf + 16, 7, 984);
    try_chunk(&c, buf, 1000, MUST_FAIL, "memcpyed header with a short payload");
  }

  /* The dataset is still usable: the original chunk reads back. */
  check(H5Dwrite_chunk(c.dset, H5P_DEFAULT, 0, offset, n, c.orig) >= 0, "%s: rewriting the chunk", codec->name);
  memset(g_read, 0, sizeof g_read);
  check(H5Dread(c.dset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, g_read) >= 0 &&
            memcmp(g_read, g_data, sizeof g_data) == 0,
        "%s: the restored chunk does not read back", codec->name);
  /* Some single flips must be caught (the tallies say how many). */
  check(flips_failed > 0, "%s: no bit flip was detected at all", codec->name);
  printf("%-16s stored %5zu bytes; %4d flip cases, %4d detected; reads failed %4d (%d with an h5sparse "
         "record), succeeded with wrong data %4d, with right data %4d\n",
         codec->name, n, flips, flips_failed, c.failed, c.failed_with_ours, c.passed_wrong, c.passed_same);
  free(buf);

out:
  free(c.orig);
  if (c.dset >= 0) H5Dclose(c.dset);
  H5Pclose(dcpl);
  H5Sclose(space);
}

/* H5Dcreate with invalid Blosc options must fail, leaving our record on the stack. */
static void invalid_options(hid_t file) {
  struct {
    unsigned cd[7];
    unsigned flags;
    int valid;
    const char* needle; /* expected in our record's message */
    const char* what;
  } cases[] = {
      {{0, 0, 0, 0, 10, 1, 0}, H5Z_FLAG_OPTIONAL, 0, "clevel", "clevel 10 (optional filter)"},
      {{0, 0, 0, 0, 10, 1, 0}, H5Z_FLAG_MANDATORY, 0, "clevel", "clevel 10 (mandatory filter)"},
      {{0, 0, 0, 0, 0xFFFFFFFFu, 1, 0}, H5Z_FLAG_OPTIONAL, 0, "clevel", "clevel 0xFFFFFFFF"},
      {{0, 0, 0, 0, 5, 3, 0}, H5Z_FLAG_OPTIONAL, 0, "shuffle", "shuffle 3"},
      {{0, 0, 0, 0, 5, 3, 0}, H5Z_FLAG_MANDATORY, 0, "shuffle", "shuffle 3 (mandatory)"},
      {{0, 0, 0, 0, 5, 1, 9}, H5Z_FLAG_OPTIONAL, 0, "compressor", "compressor 9"},
      {{0, 0, 0, 0, 5, 1, 9}, H5Z_FLAG_MANDATORY, 0, "compressor", "compressor 9 (mandatory)"},
      {{0, 0, 0, 0, 5, 1, 6}, H5Z_FLAG_OPTIONAL, 0, "compressor", "compressor 6"},
      {{0, 0, 0, 0, 9, 2, 5}, H5Z_FLAG_OPTIONAL, 1, NULL, "clevel 9, bit shuffle, zstd (valid)"},
      {{0, 0, 0, 0, 0, 0, 0}, H5Z_FLAG_OPTIONAL, 1, NULL, "clevel 0, no shuffle, blosclz (valid)"},
  };
  hsize_t dims[1] = {1000}, chunk[1] = {100};
  hid_t space = H5Screate_simple(1, dims, NULL);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char name[32];
    snprintf(name, sizeof name, "options_%zu", i);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    check(H5Pset_filter(dcpl, FILTER_BLOSC, cases[i].flags, 7, cases[i].cd) >= 0, "%s: H5Pset_filter failed",
          cases[i].what);
    hid_t dset = H5Dcreate2(file, name, H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (cases[i].valid) {
      check(dset >= 0, "%s: H5Dcreate2 failed", cases[i].what);
      if (dset < 0) H5Eprint2(H5E_DEFAULT, stderr);
    } else {
      StackInfo s = take_stack();
      check(dset < 0, "%s: H5Dcreate2 accepted invalid options", cases[i].what);
      check(s.records > 0, "%s: H5Dcreate2 failed without an error record", cases[i].what);
      check(s.ours > 0 && strstr(s.first_ours, cases[i].needle) != NULL,
            "%s: no h5sparse record naming '%s' (first: '%s')", cases[i].what, cases[i].needle, s.first_ours);
      if (s.ours > 0) printf("%-40s rejected: %s\n", cases[i].what, s.first_ours);
    }
    if (dset >= 0) H5Dclose(dset);
    H5Pclose(dcpl);
  }
  H5Sclose(space);
}

int main(int argc, char** argv) {
  const char* path = "corrupt_chunks.h5";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--expect-plugin-records") == 0)
      g_expect_plugin_records = 1;
    else
      path = argv[i];
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* failures are expected; we inspect the stack */
  make_data();

  check(H5Zfilter_avail(FILTER_BLOSC) > 0, "the Blosc filter is not available (HDF5_PLUGIN_PATH?)");
  check(H5Zfilter_avail(FILTER_LZF) > 0, "the LZF filter is not available (HDF5_PLUGIN_PATH?)");
  check(mapped("libh5sparse_blosc.so"), "libh5sparse_blosc.so is not the Blosc plugin loaded");
  check(mapped("libh5sparse_lzf.so"), "libh5sparse_lzf.so is not the LZF plugin loaded");
  check(!mapped("libH5Zblosc.so") && !mapped("libblosc_filter.so"), "a peer Blosc plugin is loaded");
  if (g_failures) return 1;

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_LATEST);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (file < 0) {
    H5Eprint2(H5E_DEFAULT, stderr);
    return 1;
  }

  const Codec codecs[] = {
      {"blosc_blosclz", FILTER_BLOSC, {0, 0, 0, 0, 5, 1, 0}, 7},
      {"blosc_lz4", FILTER_BLOSC, {0, 0, 0, 0, 5, 1, 1}, 7},
      {"blosc_lz4hc_bit", FILTER_BLOSC, {0, 0, 0, 0, 9, 2, 2}, 7},
      {"blosc_zlib_none", FILTER_BLOSC, {0, 0, 0, 0, 5, 0, 4}, 7},
      {"blosc_zstd", FILTER_BLOSC, {0, 0, 0, 0, 3, 1, 5}, 7},
      {"blosc_default", FILTER_BLOSC, {0}, 0},
      {"lzf", FILTER_LZF, {0}, 0},
  };
  for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; ++i) run_codec(file, &codecs[i]);
  invalid_options(file);

  H5Fclose(file);
  remove(path);
  printf("%d checks, %d failed\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
