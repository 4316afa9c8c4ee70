// Progress reporting on stderr (see progress.hpp).
#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace h5sparse::tool {

Progress::Progress(const std::string& mode, std::string label, std::uint64_t total)
    : enabled_(mode == "on" || (mode == "auto" && isatty(STDERR_FILENO))), label_(std::move(label)), total_(total) {}

void Progress::advance(std::uint64_t steps) {
  done_ += steps;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  draw();
}

void Progress::draw() {
  const unsigned percent = total_ ? unsigned(100 * done_ / total_) : 100;
  std::fprintf(stderr, "\r%s: %3u%% (%llu/%llu chunks)", label_.c_str(), percent, (unsigned long long)done_,
               (unsigned long long)total_);
  std::fflush(stderr);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  draw();
  std::fputc('\n', stderr);
}

}  // namespace h5sparse::tool
