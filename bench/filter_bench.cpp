// Filter benchmark driver: one measurement per process, driven by bench/run.py.
//
//   filter_bench info
//       Prints the HDF5 and c-blosc versions the benchmark runs with.
//   filter_bench gen    --dir D --mb M
//       Generates the benchmark data deterministically and stores it raw in D:
//       field.bin  float32 [32*M, 8192]  smooth temperature-like field (K) + small sensor noise
//       counts.bin int32   [32*M, 2048]  Poisson counts with a smoothly varying rate (0..6)
//   filter_bench h5     --dir D --mb M --dataset field|counts --filter ID --cd a,b,...
//                       [--plugin-lib FILE.so] [--reps N] [--max-reps N] [--clean 0|1]
//                       [--long-ms MS] [--file F.h5] [--keep 0|1] [--read-only 0|1]
//       Writes the dataset (chunks 512x512, filter optional like h5py/PyTables) into a new file,
//       closes it, reopens and reads it back; best of N for each (see Samples for when fewer
//       writes suffice and which repetitions count). --keep 1 leaves the file in place;
//       --read-only 1 only reads an existing --file (a fresh reader process: its allocator has
//       no history of compressing, which in a writing process decides where the chunk
//       buffers come from and how many page faults a read takes). With --plugin-lib the plugin
//       is dlopen'ed and registered with a wrapper that times its filter callback, so the
//       time spent inside the plugin is known too. --filter 0 writes unfiltered chunks.
//       "blocksize" is the block size in the header of the first stored Blosc frame.
//   filter_bench direct --dir D --mb M --dataset field|counts --codec blosc|blosc-global|lzf
//                       --cd a,b,... [--nthreads N] [--reps N]
//       Runs the codec core (h5sparse::blosc_* / lzf_*) on the same chunks in memory, no HDF5:
//       each chunk is first copied into a reused buffer (untimed, as HDF5 hands a filter a
//       freshly gathered chunk), then only the codec call is timed. blosc-global calls c-blosc's
//       global API instead (persistent thread pool, what hdf5-blosc uses), for comparison; only
//       there --blocksize B forces c-blosc's block size (the unit its threads share).
//   filter_bench faults [--reps N]
//       The price of a first touch: mapping, writing and unmapping a fresh 1 MiB (256 page
//       faults) against writing a 1 MiB buffer already mapped, per page. A filter callback
//       must hand HDF5 a new buffer for every decoded chunk; when the allocator gave that
//       memory back to the kernel, each page of it costs this much again.
//
// Every measuring mode prints one JSON object on stdout. Times are seconds.
#include <dlfcn.h>
#include <sys/mman.h>
#include <hdf5.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <blosc.h>

#include "h5sparse/codecs.hpp"

namespace {

constexpr hsize_t kChunkRows = 512;
constexpr hsize_t kChunkCols = 512;  // 512 x 512 x 4 bytes = 1 MiB chunks
constexpr hsize_t kFieldCols = 8192;
constexpr hsize_t kCountsCols = 2048;

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

double cpu_now() {  // CPU time of the whole process (all threads)
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// A repetition is "clean" when nothing preempted it: for single-threaded work its wall time is
// within 5% (+2 ms) of the CPU time the process used. On a shared machine only clean
// repetitions count (up to --max-reps attempts); threaded runs pass --clean 0.
bool clean_rep(double wall, double cpu) { return wall <= 1.05 * cpu + 0.002; }

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "filter_bench: %s\n", message.c_str());
  std::exit(2);
}

void check(bool ok, const std::string& what) {
  if (!ok) die(what);
}

// --- command line -----------------------------------------------------------------------------
struct Args {
  std::string mode;
  std::map<std::string, std::string> values;

  std::string get(const std::string& key, const std::string& fallback = "") const {
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second;
  }
  std::string need(const std::string& key) const {
    auto it = values.find(key);
    if (it == values.end()) die("missing --" + key);
    return it->second;
  }
  long number(const std::string& key, long fallback) const {
    auto it = values.find(key);
    if (it == values.end()) return fallback;
    char* end = nullptr;
    long v = std::strtol(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0') die("--" + key + " needs an integer");
    return v;
  }
};

Args parse_args(int argc, char** argv) {
  if (argc < 2) die("usage: filter_bench gen|h5|direct --option value ... (see the source)");
  Args a;
  a.mode = argv[1];
  for (int i = 2; i < argc; i += 2) {
    std::string key = argv[i];
    if (key.rfind("--", 0) != 0 || i + 1 >= argc) die("bad argument " + key);
    a.values[key.substr(2)] = argv[i + 1];
  }
  return a;
}

std::vector<unsigned> parse_cd(const std::string& text) {
  std::vector<unsigned> cd;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    cd.push_back(unsigned(std::stoul(text.substr(pos, comma - pos))));
    pos = comma + 1;
  }
  return cd;
}

// --- data -------------------------------------------------------------------------------------
struct DataSpec {
  std::string name;
  hsize_t rows = 0, cols = 0;
  std::size_t element_size = 4;
  hid_t mem_type = -1, file_type = -1;
  std::size_t bytes() const { return std::size_t(rows * cols) * element_size; }
};

// The field has 32*M rows of 8192 float32 (M MiB), M rounded up to a multiple of 16 so that
// the 512-row chunks tile it; the counts have the same rows and 2048 int32 columns (M/4 MiB).
hsize_t rows_for(long mb) {
  if (mb < 16) mb = 16;
  mb = (mb + 15) / 16 * 16;
  return hsize_t(mb) * 32;
}

DataSpec spec_for(const std::string& name, long mb) {
  DataSpec s;
  s.name = name;
  s.rows = rows_for(mb);
  if (name == "field") {
    s.cols = kFieldCols;
    s.mem_type = H5T_NATIVE_FLOAT;
    s.file_type = H5T_IEEE_F32LE;
  } else if (name == "counts") {
    s.cols = kCountsCols;
    s.mem_type = H5T_NATIVE_INT32;
    s.file_type = H5T_STD_I32LE;
  } else {
    die("unknown dataset " + name);
  }
  return s;
}

struct Rng {  // splitmix64: tiny, fast, and the same sequence everywhere
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};

// Temperature-like field in kelvin: a meridional gradient plus a few low-frequency waves with
// wavelengths from half the grid down to ~100 cells (all separable, sin(a+b) expanded), plus
// triangular sensor noise of +-0.02 K (about 10 noisy low mantissa bits, like measured data).
void generate_field(float* out, hsize_t rows, hsize_t cols) {
  struct Wave { double amplitude, wavelength_i, wavelength_j, phase; };
  const Wave waves[] = {
      {8.0, 4100.0, 5200.0, 0.3}, {4.0, 1500.0, -2100.0, 1.1}, {2.0, 650.0, 900.0, 2.0},
      {1.0, 310.0, -260.0, 0.7},  {0.5, 120.0, 140.0, 1.9},
  };
  constexpr std::size_t kWaves = sizeof(waves) / sizeof(waves[0]);
  const double two_pi = 6.283185307179586;
  std::vector<double> si(kWaves * rows), ci(kWaves * rows), sj(kWaves * cols), cj(kWaves * cols);
  for (std::size_t k = 0; k < kWaves; ++k) {
    for (hsize_t i = 0; i < rows; ++i) {
      const double a = two_pi * double(i) / waves[k].wavelength_i + waves[k].phase;
      si[k * rows + i] = waves[k].amplitude * std::sin(a);
      ci[k * rows + i] = waves[k].amplitude * std::cos(a);
    }
    for (hsize_t j = 0; j < cols; ++j) {
      const double b = two_pi * double(j) / waves[k].wavelength_j;
      sj[k * cols + j] = std::sin(b);
      cj[k * cols + j] = std::cos(b);
    }
  }
  Rng rng{0x5EED0001};
  for (hsize_t i = 0; i < rows; ++i) {
    const double base = 300.0 - 60.0 * double(i) / double(rows);
    float* row = out + i * cols;
    for (hsize_t j = 0; j < cols; ++j) {
      double v = base;
      for (std::size_t k = 0; k < kWaves; ++k)
        v += si[k * rows + i] * cj[k * cols + j] + ci[k * rows + i] * sj[k * cols + j];
      v += 0.02 * (rng.uniform() + rng.uniform() - 1.0);
      row[j] = float(v);
    }
  }
}

// Detector-like counts: Poisson samples whose rate varies smoothly between 0 and 6 (so there
// are wide areas of mostly zeros and areas of small numbers).
void generate_counts(std::int32_t* out, hsize_t rows, hsize_t cols) {
  const double two_pi = 6.283185307179586;
  std::vector<double> ri(rows), rj(cols);
  for (hsize_t i = 0; i < rows; ++i) ri[i] = std::sin(two_pi * double(i) / 1700.0 + 0.4);
  for (hsize_t j = 0; j < cols; ++j) rj[j] = std::cos(two_pi * double(j) / 900.0);
  Rng rng{0x5EED0002};
  for (hsize_t i = 0; i < rows; ++i) {
    for (hsize_t j = 0; j < cols; ++j) {
      const double rate = 3.0 * (1.0 + ri[i] * rj[j]);
      const double limit = std::exp(-rate);
      int k = 0;
      double p = rng.uniform();
      while (p > limit) {  // Knuth: fine for small rates
        ++k;
        p *= rng.uniform();
      }
      out[i * cols + j] = k;
    }
  }
}

std::vector<std::uint8_t> load(const std::string& dir, const DataSpec& s) {
  const std::string path = dir + "/" + s.name + ".bin";
  std::FILE* f = std::fopen(path.c_str(), "rb");
  check(f != nullptr, "cannot open " + path + " (run gen first)");
  std::vector<std::uint8_t> data(s.bytes());
  const std::size_t got = std::fread(data.data(), 1, data.size(), f);
  std::fclose(f);
  check(got == data.size(), path + " is shorter than expected; regenerate with the same --mb");
  return data;
}

void save(const std::string& dir, const DataSpec& s, const void* data) {
  const std::string path = dir + "/" + s.name + ".bin";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  check(f != nullptr, "cannot create " + path);
  check(std::fwrite(data, 1, s.bytes(), f) == s.bytes(), "cannot write " + path);
  check(std::fclose(f) == 0, "cannot write " + path);
}

int run_gen(const Args& a) {
  const std::string dir = a.need("dir");
  const long mb = a.number("mb", 256);
  DataSpec field = spec_for("field", mb), counts = spec_for("counts", mb);
  std::vector<float> f(field.rows * field.cols);
  generate_field(f.data(), field.rows, field.cols);
  save(dir, field, f.data());
  f = {};
  std::vector<std::int32_t> c(counts.rows * counts.cols);
  generate_counts(c.data(), counts.rows, counts.cols);
  save(dir, counts, c.data());
  std::printf("{\"mode\": \"gen\", \"field_bytes\": %zu, \"counts_bytes\": %zu, \"field_shape\": [%llu, %llu], "
              "\"counts_shape\": [%llu, %llu], \"chunk\": [%llu, %llu]}\n",
              field.bytes(), counts.bytes(), (unsigned long long)field.rows, (unsigned long long)field.cols,
              (unsigned long long)counts.rows, (unsigned long long)counts.cols,
              (unsigned long long)kChunkRows, (unsigned long long)kChunkCols);
  return 0;
}

int run_info() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  std::printf("{\"mode\": \"info\", \"hdf5\": \"%u.%u.%u\", \"c_blosc\": \"%s\", \"blosc_compressors\": \"%s\"}\n",
              major, minor, release, blosc_get_version_string(), blosc_list_compressors());
  return 0;
}

// --- HDF5 -------------------------------------------------------------------------------------
// Time spent inside the plugin's filter callback, per direction.
struct CallbackClock {
  H5Z_func_t real = nullptr;
  double seconds[2] = {0, 0};  // [0] compress, [1] decompress
  long calls[2] = {0, 0};
  long failures[2] = {0, 0};
  long faults[2] = {0, 0};  // minor page faults inside the callback
};
CallbackClock g_clock;

size_t timed_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                    size_t* buf_size, void** buf) {
  const int dir = (flags & H5Z_FLAG_REVERSE) ? 1 : 0;
  const long f0 = minor_faults();
  const double t0 = now();
  const size_t r = g_clock.real(flags, cd_nelmts, cd_values, nbytes, buf_size, buf);
  g_clock.seconds[dir] += now() - t0;
  g_clock.faults[dir] += minor_faults() - f0;
  ++g_clock.calls[dir];
  if (r == 0) ++g_clock.failures[dir];
  return r;
}

// Loads a filter plugin the way H5PL does (dlopen, H5PLget_plugin_info) and registers it with
// its filter callback wrapped by timed_filter.
void register_timed_plugin(const std::string& path, H5Z_filter_t expected_id) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) die(std::string("dlopen: ") + dlerror());
  using InfoFn = const void* (*)();
  auto info = reinterpret_cast<InfoFn>(dlsym(lib, "H5PLget_plugin_info"));
  check(info != nullptr, path + " has no H5PLget_plugin_info");
  const auto* cls = static_cast<const H5Z_class2_t*>(info());
  check(cls != nullptr && cls->id == expected_id,
        path + " does not provide filter " + std::to_string(expected_id));
  static H5Z_class2_t wrapped;
  wrapped = *cls;
  g_clock.real = cls->filter;
  wrapped.filter = timed_filter;
  check(H5Zregister(&wrapped) >= 0, "H5Zregister failed");
}

// Repetitions of one kind of measurement (writes, reads, compressions...). Only clean ones
// count (see clean_rep); if there are none, the best of all attempts is reported.
struct Samples {
  std::vector<double> clean, all, clean_inner, all_inner;  // inner: time inside the filter callback
  void add(double wall, double cpu, double inner, bool need_clean) {
    all.push_back(wall);
    all_inner.push_back(inner);
    if (!need_clean || clean_rep(wall, cpu)) {
      clean.push_back(wall);
      clean_inner.push_back(inner);
    }
  }
  double best() const { return min_of(clean.empty() ? all : clean); }
  double best_inner() const { return min_of(clean.empty() ? all_inner : clean_inner); }
  // Enough: `reps` clean samples, or two clean ones within 2% of each other, or one clean one
  // of at least `long_s` seconds (long, stable measurements such as the slow compressors need
  // not be run again and again).
  bool enough(int reps, double long_s = 0) const {
    if (int(clean.size()) >= reps) return true;
    if (long_s > 0 && !clean.empty() && min_of(clean) >= long_s) return true;
    if (clean.size() < 2) return false;
    std::vector<double> s = clean;
    std::sort(s.begin(), s.end());
    return s[1] <= 1.02 * s[0];
  }
  static double min_of(const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
  }
};

struct H5Result {
  hsize_t stored = 0;
  long chunks = 0, unfiltered_chunks = 0;
  long calls_write = 0, calls_read = 0, failed_write = 0;
  long faults_write = 0, faults_read = 0, filter_faults_write = 0, filter_faults_read = 0;  // last rep
  std::size_t blosc_blocksize = 0;  // from the first stored Blosc frame's header
};

std::string json_seconds(bool known, double seconds) {
  return known ? std::to_string(seconds) : std::string("null");
}

int run_h5(const Args& a) {
  const std::string dir = a.need("dir");
  const DataSpec s = spec_for(a.need("dataset"), a.number("mb", 256));
  const H5Z_filter_t filter = H5Z_filter_t(a.number("filter", 0));
  const std::vector<unsigned> cd = parse_cd(a.get("cd"));
  const int reps = int(a.number("reps", 3));
  const int max_reps = int(a.number("max-reps", 3 * reps));
  const bool need_clean = a.number("clean", 1) != 0;
  const double long_s = double(a.number("long-ms", 0)) / 1000.0;
  const std::string file = a.get("file", "/dev/shm/filter_bench_" + std::to_string(getpid()) + ".h5");
  const bool keep = a.number("keep", 0) != 0;
  const bool read_only = a.number("read-only", 0) != 0;
  const std::string plugin_lib = a.get("plugin-lib");
  if (!plugin_lib.empty()) register_timed_plugin(plugin_lib, filter);

  const std::vector<std::uint8_t> data = load(dir, s);
  std::vector<std::uint8_t> back(data.size());
  std::memset(back.data(), 0, back.size());  // fault the read buffer in before timing
  H5Result r;
  Samples writes, reads;

  // write: create, write everything in one call, close (flushes the chunk cache)
  auto write_once = [&] {
    std::remove(file.c_str());
    g_clock = CallbackClock{g_clock.real};
    const hsize_t dims[2] = {s.rows, s.cols};
    const hsize_t chunk[2] = {kChunkRows, kChunkCols};
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    check(H5Pset_chunk(dcpl, 2, chunk) >= 0, "H5Pset_chunk");
    if (filter != 0)
      check(H5Pset_filter(dcpl, filter, H5Z_FLAG_OPTIONAL, cd.size(), cd.data()) >= 0,
            "H5Pset_filter " + std::to_string(filter) + " (is the plugin found?)");
    const long f0 = minor_faults();
    const double c0 = cpu_now();
    const double t0 = now();
    hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    check(f >= 0, "H5Fcreate " + file);
    hid_t d = H5Dcreate2(f, s.name.c_str(), s.file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    check(d >= 0, "H5Dcreate2");
    check(H5Dwrite(d, s.mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0, "H5Dwrite");
    check(H5Dclose(d) >= 0 && H5Fclose(f) >= 0, "close after write");
    const double wall = now() - t0;
    const double cpu = cpu_now() - c0;
    r.faults_write = minor_faults() - f0;
    H5Pclose(dcpl);
    H5Sclose(space);
    r.calls_write = g_clock.calls[0];
    r.failed_write = g_clock.failures[0];
    r.filter_faults_write = g_clock.faults[0];
    writes.add(wall, cpu, g_clock.seconds[0], need_clean);
  };

  // read: open, read everything in one call, close
  auto read_once = [&] {
    g_clock.seconds[1] = 0;
    g_clock.calls[1] = g_clock.faults[1] = 0;
    const long f0 = minor_faults();
    double c0 = cpu_now();
    double t0 = now();
    hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    check(f >= 0, "H5Fopen " + file);
    hid_t d = H5Dopen2(f, s.name.c_str(), H5P_DEFAULT);
    check(d >= 0, "H5Dopen2");
    check(H5Dread(d, s.mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) >= 0, "H5Dread");
    double wall = now() - t0;
    double cpu = cpu_now() - c0;
    r.faults_read = minor_faults() - f0;
    // untimed bookkeeping, then the close that ends the timed part
    r.stored = H5Dget_storage_size(d);
    hsize_t n = 0;
    check(H5Dget_num_chunks(d, H5S_ALL, &n) >= 0, "H5Dget_num_chunks");
    r.chunks = long(n);
    r.unfiltered_chunks = 0;
    for (hsize_t i = 0; i < n && filter != 0; ++i) {
      unsigned mask = 0;
      haddr_t addr = 0;
      hsize_t size = 0;
      check(H5Dget_chunk_info(d, H5S_ALL, i, nullptr, &mask, &addr, &size) >= 0, "H5Dget_chunk_info");
      if (mask != 0) ++r.unfiltered_chunks;
      if (mask == 0 && filter == 32001 && r.blosc_blocksize == 0) {
        hsize_t offset[2] = {0, 0};
        check(H5Dget_chunk_info(d, H5S_ALL, i, offset, &mask, &addr, &size) >= 0, "H5Dget_chunk_info");
        std::vector<std::uint8_t> frame(size);
        uint32_t read_mask = 0;
        check(H5Dread_chunk(d, H5P_DEFAULT, offset, &read_mask, frame.data()) >= 0, "H5Dread_chunk");
        std::size_t nbytes = 0, cbytes = 0;
        blosc_cbuffer_sizes(frame.data(), &nbytes, &cbytes, &r.blosc_blocksize);
      }
    }
    c0 = cpu_now();
    t0 = now();
    check(H5Dclose(d) >= 0 && H5Fclose(f) >= 0, "close after read");
    wall += now() - t0;
    cpu += cpu_now() - c0;
    check(std::memcmp(back.data(), data.data(), data.size()) == 0, "data read back differs");
    std::memset(back.data(), 0, back.size());
    r.calls_read = g_clock.calls[1];
    r.filter_faults_read = g_clock.faults[1];
    reads.add(wall, cpu, g_clock.seconds[1], need_clean);
  };

  while (!read_only && !writes.enough(reps, long_s) && int(writes.all.size()) < max_reps) {
    write_once();
    read_once();
  }
  while (int(reads.clean.size()) < reps && int(reads.all.size()) < max_reps) read_once();
  if (!keep && !read_only) std::remove(file.c_str());

  const bool timed = !plugin_lib.empty();
  std::printf(
      "{\"mode\": \"h5\", \"dataset\": \"%s\", \"filter\": %d, \"bytes\": %zu, \"stored\": %llu, "
      "\"write_s\": %.6f, \"read_s\": %.6f, \"filter_write_s\": %s, \"filter_read_s\": %s, "
      "\"chunks\": %ld, \"unfiltered_chunks\": %ld, \"calls_write\": %ld, \"calls_read\": %ld, "
      "\"failed_write\": %ld, \"faults_write\": %ld, \"faults_read\": %ld, \"filter_faults_write\": %ld, "
      "\"filter_faults_read\": %ld, \"blocksize\": %zu, \"reps\": %d, \"writes\": [%zu, %zu], \"reads\": [%zu, %zu]}\n",
      s.name.c_str(), int(filter), data.size(), (unsigned long long)r.stored, writes.best(), reads.best(),
      json_seconds(timed, writes.best_inner()).c_str(), json_seconds(timed, reads.best_inner()).c_str(), r.chunks,
      r.unfiltered_chunks, r.calls_write, r.calls_read, r.failed_write, r.faults_write, r.faults_read,
      r.filter_faults_write, r.filter_faults_read, r.blosc_blocksize, reps, writes.clean.size(), writes.all.size(),
      reads.clean.size(), reads.all.size());
  return 0;
}

// --- direct codec calls -------------------------------------------------------------------------
std::vector<std::vector<std::uint8_t>> split_chunks(const std::vector<std::uint8_t>& data, const DataSpec& s) {
  std::vector<std::vector<std::uint8_t>> chunks;
  const std::size_t row_bytes = kChunkCols * s.element_size;
  for (hsize_t ci = 0; ci < s.rows; ci += kChunkRows) {
    for (hsize_t cj = 0; cj < s.cols; cj += kChunkCols) {
      std::vector<std::uint8_t> c(kChunkRows * row_bytes);
      for (hsize_t i = 0; i < kChunkRows; ++i)
        std::memcpy(c.data() + i * row_bytes, data.data() + ((ci + i) * s.cols + cj) * s.element_size, row_bytes);
      chunks.push_back(std::move(c));
    }
  }
  return chunks;
}

int run_direct(const Args& a) {
  const std::string dir = a.need("dir");
  const DataSpec s = spec_for(a.need("dataset"), a.number("mb", 256));
  const std::string codec = a.need("codec");
  const std::vector<unsigned> cd = parse_cd(a.get("cd"));
  const int reps = int(a.number("reps", 3));
  const int max_reps = int(a.number("max-reps", 3 * reps));
  const bool need_clean = a.number("clean", 1) != 0;
  const double long_s = double(a.number("long-ms", 0)) / 1000.0;
  h5sparse::BloscParams p;
  const bool global = codec == "blosc-global";  // c-blosc's global API: persistent thread pool
  if (codec == "blosc" || global) {
    p.typesize = s.element_size;  // what set_local stores in cd_values[2]
    if (cd.size() >= 5) p.clevel = int(cd[4]);
    if (cd.size() >= 6) p.shuffle = h5sparse::Shuffle(cd[5]);
    if (cd.size() >= 7) p.compressor = h5sparse::BloscCompressor(cd[6]);
    p.nthreads = int(a.number("nthreads", 1));
  } else if (codec != "lzf") {
    die("unknown codec " + codec);
  }
  if (global) {
    blosc_init();
    blosc_set_nthreads(p.nthreads);
    check(blosc_set_compressor(h5sparse::blosc_compressor_name(p.compressor)) >= 0, "blosc_set_compressor");
    blosc_set_blocksize(std::size_t(a.number("blocksize", 0)));  // 0 = c-blosc's automatic choice
  }
  auto compress = [&](std::uint8_t* dst, const std::uint8_t* src, std::size_t n) -> std::size_t {
    if (codec == "lzf") return h5sparse::lzf_compress(dst, n, src, n);
    if (!global) return h5sparse::blosc_compress(dst, n, src, n, p);
    const int rc = blosc_compress(p.clevel, int(p.shuffle), p.typesize, n, src, dst, n);
    check(rc >= 0, "blosc_compress failed");
    return std::size_t(rc);
  };
  auto decompress = [&](std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src, std::size_t n) {
    if (codec == "lzf") return h5sparse::lzf_decompress(dst, capacity, src, n);
    if (!global) return h5sparse::blosc_decompress(dst, capacity, src, n, p.nthreads);
    const int rc = blosc_decompress(src, dst, capacity);
    check(rc > 0, "blosc_decompress failed");
    return std::size_t(rc);
  };

  const auto chunks = split_chunks(load(dir, s), s);
  const std::size_t chunk_bytes = chunks.front().size();
  std::vector<std::vector<std::uint8_t>> packed(chunks.size());
  std::vector<std::uint8_t> in(chunk_bytes + h5sparse::blosc_compress_bound(chunk_bytes));
  std::vector<std::uint8_t> out(chunk_bytes + h5sparse::blosc_compress_bound(chunk_bytes));
  std::memset(in.data(), 0, in.size());
  std::memset(out.data(), 0, out.size());
  Samples comp, decomp;
  std::size_t stored = 0;
  long raw = 0;
  auto compress_all = [&] {
    double wall = 0, cpu = 0;
    stored = 0;
    raw = 0;
    for (std::size_t k = 0; k < chunks.size(); ++k) {
      std::memcpy(in.data(), chunks[k].data(), chunk_bytes);
      const double c0 = cpu_now();
      const double t0 = now();
      // capacity = chunk size, as the plugins give it: not smaller means "store raw"
      const std::size_t n = compress(out.data(), in.data(), chunk_bytes);
      wall += now() - t0;
      cpu += cpu_now() - c0;
      if (n == 0) {
        ++raw;
        packed[k].clear();
        stored += chunk_bytes;
      } else {
        packed[k].assign(out.begin(), out.begin() + long(n));
        stored += n;
      }
    }
    comp.add(wall, cpu, 0, need_clean);
  };
  auto decompress_all = [&] {
    double wall = 0, cpu = 0;
    for (std::size_t k = 0; k < chunks.size(); ++k) {
      if (packed[k].empty()) continue;  // HDF5 does not call the filter for a raw chunk either
      std::memcpy(in.data(), packed[k].data(), packed[k].size());
      const double c0 = cpu_now();
      const double t0 = now();
      const std::size_t n = decompress(out.data(), chunk_bytes, in.data(), packed[k].size());
      wall += now() - t0;
      cpu += cpu_now() - c0;
      check(n == chunk_bytes && std::memcmp(out.data(), chunks[k].data(), chunk_bytes) == 0,
            "direct round trip differs");
    }
    decomp.add(wall, cpu, 0, need_clean);
  };
  while (!comp.enough(reps, long_s) && int(comp.all.size()) < max_reps) {
    compress_all();
    decompress_all();
  }
  while (int(decomp.clean.size()) < reps && int(decomp.all.size()) < max_reps) decompress_all();
  if (global) blosc_destroy();
  std::size_t blocksize = 0;  // of the first compressed chunk, to see how much blosc can split
  for (const auto& c : packed) {
    if (c.empty() || codec == "lzf") continue;
    std::size_t nbytes = 0, cbytes = 0;
    blosc_cbuffer_sizes(c.data(), &nbytes, &cbytes, &blocksize);
    break;
  }
  std::printf("{\"mode\": \"direct\", \"dataset\": \"%s\", \"codec\": \"%s\", \"bytes\": %zu, \"stored\": %zu, "
              "\"compress_s\": %.6f, \"decompress_s\": %.6f, \"chunks\": %zu, \"raw_chunks\": %ld, "
              "\"blocksize\": %zu, \"nthreads\": %d, \"reps\": %d, \"writes\": [%zu, %zu], \"reads\": [%zu, %zu]}\n",
              s.name.c_str(), codec.c_str(), chunks.size() * chunk_bytes, stored, comp.best(), decomp.best(),
              chunks.size(), raw, blocksize, p.nthreads, reps, comp.clean.size(), comp.all.size(),
              decomp.clean.size(), decomp.all.size());
  return 0;
}

}  // namespace

int run_faults(const Args& a) {
  const int reps = int(a.number("reps", 200));
  constexpr std::size_t kBytes = std::size_t(1) << 20;
  const std::size_t pages = kBytes / std::size_t(sysconf(_SC_PAGESIZE));
  std::vector<std::uint8_t> warm(kBytes, 1);
  double fresh_best = 1e9, warm_best = 1e9;
  long faults = 0;
  for (int r = 0; r < reps; ++r) {
    const long f0 = minor_faults();
    double t0 = now();
    void* m = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(m != MAP_FAILED, "mmap");
    std::memset(m, r & 0xff, kBytes);
    munmap(m, kBytes);
    fresh_best = std::min(fresh_best, now() - t0);
    faults = minor_faults() - f0;
    t0 = now();
    std::memset(warm.data(), r & 0xff, kBytes);
    warm_best = std::min(warm_best, now() - t0);
  }
  std::printf("{\"mode\": \"faults\", \"bytes\": %zu, \"pages\": %zu, \"faults\": %ld, \"fresh_s\": %.9f, "
              "\"warm_s\": %.9f, \"per_fault_s\": %.9f}\n",
              kBytes, pages, faults, fresh_best, warm_best, (fresh_best - warm_best) / double(pages));
  return 0;
}

int main(int argc, char** argv) {
  try {
    const Args a = parse_args(argc, argv);
    if (a.mode == "gen") return run_gen(a);
    if (a.mode == "info") return run_info();
    if (a.mode == "h5") return run_h5(a);
    if (a.mode == "direct") return run_direct(a);
    if (a.mode == "faults") return run_faults(a);
    die("unknown mode " + a.mode);
  } catch (const std::exception& e) {
    die(e.what());
  }
}
