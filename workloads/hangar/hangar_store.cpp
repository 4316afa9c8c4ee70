// hangar_store: the Hangar-style sample store as a command-line example.
//
//   hangar_store write DIR [--mode dense|sparse] [--dtypes u1,f4,...|all] [--max-shape 64,64,3]
//                          [--samples N] [--dist full|large|uniform|skewed|heavy] [--seed S] [--values ramp|random]
//                          [--compression SPEC|none] [--records FILE] [--delay-ms MS]
//                          [--collection-size N] [--collection-count N] [--index fixed|extensible]
//   hangar_store read DIR --records FILE [--seed S ... same generator options: compare values]
//                          [--follow N [--timeout SECONDS]] [--no-swmr]
//
// write stores synthetic samples (one store file per dtype, all in DIR) and appends each
// record string to FILE as soon as the sample is flushed; read reads every record back and
// verifies its digest; with --follow it tails FILE while a writer is still writing (SWMR read,
// H5Drefresh before each read). Each prints one JSON line of figures: "seconds" is the wall
// time spent in the store, "cpu_seconds" the process CPU time spent there (steadier on a
// loaded machine). Exit status: 0 ok, 2 a digest mismatch (data in != data out), 1 any other error (HDF5's error stack on stderr).
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <thread>

#include "hangar/errors.hpp"
#include "hangar/sample_store.hpp"
#include "hangar/samples.hpp"

namespace {

using namespace hangar;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string command, directory, mode = "dense", dtypes = "u1", max_shape = "64,64,3", dist = "uniform",
              values = "ramp";
  std::string compression, records, index;
  std::uint64_t samples = 1000, seed = 1, follow = 0;
  bool seed_given = false, swmr = true;
  unsigned delay_ms = 0, collection_size = kCollectionSize, collection_count = kCollectionCount;
  double timeout = 60;
};

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) parts.push_back(part);
  return parts;
}

Args parse_args(int argc, char** argv) {
  if (argc < 3) throw std::invalid_argument("usage: hangar_store write|read DIR [options] (see the source header)");
  Args a;
  a.command = argv[1];
  a.directory = argv[2];
  for (int i = 3; i < argc; ++i) {
    const std::string key = argv[i];
    if (key == "--no-swmr") { a.swmr = false; continue; }
    if (i + 1 >= argc) throw std::invalid_argument("option " + key + " needs a value");
    const std::string value = argv[++i];
    if (key == "--mode") a.mode = value;
    else if (key == "--dtypes") a.dtypes = value;
    else if (key == "--max-shape") a.max_shape = value;
    else if (key == "--samples") a.samples = std::stoull(value);
    else if (key == "--dist") a.dist = value;
    else if (key == "--values") a.values = value;
    else if (key == "--seed") { a.seed = std::stoull(value); a.seed_given = true; }
    else if (key == "--compression") a.compression = value;
    else if (key == "--records") a.records = value;
    else if (key == "--delay-ms") a.delay_ms = unsigned(std::stoul(value));
    else if (key == "--collection-size") a.collection_size = unsigned(std::stoul(value));
    else if (key == "--collection-count") a.collection_count = unsigned(std::stoul(value));
    else if (key == "--index") a.index = value;
    else if (key == "--follow") a.follow = std::stoull(value);
    else if (key == "--timeout") a.timeout = std::stod(value);
    else throw std::invalid_argument("unknown option " + key);
  }
  return a;
}

SampleGenerator generator(const Args& a) {
  std::vector<Dtype> dtypes;
  if (a.dtypes == "all") {
    for (const DtypeInfo& d : all_dtypes()) dtypes.push_back(d.dtype);
  } else {
    for (const std::string& name : split(a.dtypes, ',')) dtypes.push_back(parse_dtype(name));
  }
  Shape shape;
  for (const std::string& d : split(a.max_shape, ',')) shape.push_back(std::stoull(d));
  return SampleGenerator(a.seed, dtypes, shape, a.dist, a.values);
}

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// CPU time of the whole process (every thread), in seconds.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? std::uint64_t(st.st_size) : 0;
}

int run_write(const Args& a) {
  const SampleGenerator gen = generator(a);
  StoreOptions base;
  base.mode = parse_storage_mode(a.mode);
  base.schema_shape = gen.max_shape();
  base.compression = parse_compression(a.compression);
  base.collection_size = a.collection_size;
  base.collection_count = a.collection_count;
  if (!a.index.empty()) base.chunk_index = parse_chunk_index(a.index);
  const ChunkIndex index = base.chunk_index.value_or(default_chunk_index(base.mode));
  std::unique_ptr<std::ofstream> records;
  if (!a.records.empty()) {
    records = std::make_unique<std::ofstream>(a.records, std::ios::trunc);
    if (!*records) throw std::runtime_error("cannot write " + a.records);
  }
  std::map<Dtype, std::unique_ptr<StoreWriter>> writers;  // one store (column) per dtype
  std::vector<std::uint8_t> data;
  std::uint64_t bytes = 0, padded = 0;
  Clock::duration spent{};  // in the store only: generating samples and records files is not timed
  double cpu = 0;
  for (std::uint64_t i = 0; i < a.samples; ++i) {
    const SampleGenerator::Spec spec = gen.spec(i);
    gen.fill(i, spec, data);
    const double cpu_start = cpu_seconds();
    const auto start = Clock::now();
    std::unique_ptr<StoreWriter>& writer = writers[spec.dtype];
    if (!writer) {
      StoreOptions options = base;
      options.dtype = spec.dtype;
      writer = std::make_unique<StoreWriter>(a.directory, options);
    }
    const Record record = writer->write(data.data(), spec.shape);
    spent += Clock::now() - start;
    cpu += cpu_seconds() - cpu_start;
    bytes += data.size();
    padded += element_count(gen.max_shape()) * info(spec.dtype).size;
    if (records) *records << record.str() << '\n' << std::flush;
    if (a.delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(a.delay_ms));
  }
  std::uint64_t file_bytes = 0, files = 0;
  for (auto& [dtype, writer] : writers) {
    const double cpu_start = cpu_seconds();
    const auto start = Clock::now();
    writer->close();
    spent += Clock::now() - start;
    cpu += cpu_seconds() - cpu_start;
    for (const std::string& path : writer->files()) file_bytes += file_size(path), ++files;
  }
  const double seconds = std::chrono::duration<double>(spent).count();
  std::printf(
      "{\"command\": \"write\", \"mode\": \"%s\", \"index\": \"%s\", \"samples\": %llu, \"bytes\": %llu, "
      "\"padded_bytes\": %llu, \"seconds\": %.6f, \"cpu_seconds\": %.6f, \"file_bytes\": %llu, \"files\": %llu, "
      "\"finished_at\": %.6f}\n",
      a.mode.c_str(), chunk_index_name(index), (unsigned long long)a.samples, (unsigned long long)bytes,
      (unsigned long long)padded, seconds, cpu, (unsigned long long)file_bytes, (unsigned long long)files,
      epoch_seconds());
  return 0;
}

// Next complete line of a file another process is appending to (false at timeout).
bool next_line(std::ifstream& in, std::string& line, Clock::time_point deadline) {
  std::string partial;
  while (true) {
    std::string chunk;
    if (std::getline(in, chunk)) {
      if (!in.eof()) {
        line = partial + chunk;
        return true;
      }
      partial += chunk;  // no newline yet: the writer is mid-line
    }
    in.clear();
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

int run_read(const Args& a) {
  if (a.records.empty()) throw std::invalid_argument("read needs --records FILE");
  std::ifstream in(a.records);
  if (!in) throw std::runtime_error("cannot read " + a.records);
  std::unique_ptr<SampleGenerator> gen;
  if (a.seed_given) gen = std::make_unique<SampleGenerator>(generator(a));
  StoreReader reader(a.directory, ReaderOptions{a.swmr, a.follow > 0});
  std::vector<std::uint8_t> got, expected;
  std::uint64_t n = 0, bytes = 0;
  double first_read_at = 0;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.timeout));
  Clock::duration spent{};  // in the store only (not waiting for records, not comparing)
  double cpu = 0;
  std::string line;
  while (a.follow ? n < a.follow : bool(std::getline(in, line))) {
    if (a.follow && !next_line(in, line, deadline))
      throw std::runtime_error("timed out after " + std::to_string(n) + " of " + std::to_string(a.follow) + " records");
    if (line.empty()) continue;
    const Record record = Record::parse(line);
    const double cpu_start = cpu_seconds();
    const auto read_start = Clock::now();
    const Dtype dtype = reader.read_into(record, got);
    spent += Clock::now() - read_start;
    cpu += cpu_seconds() - cpu_start;
    if (n == 0) first_read_at = epoch_seconds();
    if (gen) {  // beyond the digest: the exact sample the writer generated
      const SampleGenerator::Spec spec = gen->spec(n);
      gen->fill(n, spec, expected);
      if (spec.dtype != dtype || spec.shape != record.shape || expected != got)
        throw StoreError("sample " + std::to_string(n) + " (" + record.str() + ") differs from what was written");
    }
    bytes += got.size();
    ++n;
  }
  const double seconds = std::chrono::duration<double>(spent).count();
  std::printf(
      "{\"command\": \"read\", \"samples\": %llu, \"bytes\": %llu, \"seconds\": %.6f, \"cpu_seconds\": %.6f, "
      "\"first_read_at\": %.6f}\n",
      (unsigned long long)n, (unsigned long long)bytes, seconds, cpu, first_read_at);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are reported with their stack, once
  try {
    const Args a = parse_args(argc, argv);
    if (a.command == "write") return run_write(a);
    if (a.command == "read") return run_read(a);
    throw std::invalid_argument("unknown command '" + a.command + "' (write, read)");
  } catch (const DigestMismatch& e) {
    std::fprintf(stderr, "hangar_store: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hangar_store: %s\n", e.what());
    return 1;
  }
}
