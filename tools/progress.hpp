// Progress of long runs on stderr: "\r<label>: 45% (120/256 chunks)", redrawn at most five
// times a second, only when stderr is a terminal or the user asked for it (so logs and test
// output stay clean).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace h5sparse::tool {

class Progress {
 public:
  /// `mode`: "auto" (stderr is a tty), "on" or "off".
  Progress(const std::string& mode, std::string label, std::uint64_t total);
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::uint64_t steps = 1);
  /// Draws the final state and ends the line (once).
  void finish();

 private:
  void draw();

  bool enabled_;
  std::string label_;
  std::uint64_t total_, done_ = 0;
  bool finished_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace h5sparse::tool
