// SPDX-License-Identifier: Apache-2.0
#include "sim/core/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace indexsim::sim {

std::string clock_text(double s) {
  if (!(s >= 0) || s > 1e7) return "--:--";
  const long t = long(s + 0.5);
  char b[32];
  if (t >= 3600) std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else std::snprintf(b, sizeof b, "%02ld:%02ld", t / 60, t % 60);
  return b;
}

Progress::Progress(std::string name, size_t total, double log_interval_s)
    : name_(std::move(name)), total_(total), log_interval_s_(log_interval_s), tty_(isatty(2) != 0),
      start_(std::chrono::steady_clock::now()), last_print_(start_) {}

void Progress::update(double done, const std::string& label) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_print_).count();
  if (printed_ && since < (tty_ ? 0.1 : log_interval_s_)) {
    held_ = true;  // shown later, or by finish()
    held_done_ = done;
    held_label_ = label;
    return;
  }
  print(done, label, false);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (held_) print(held_done_, held_label_, true);
  else if (tty_ && printed_) std::fputc('\n', stderr);
  std::fflush(stderr);
}

void Progress::print(double done, const std::string& label, bool last) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double share = total_ ? done / double(total_) : done;
  // The time left at the rate so far; unknown before anything is done.
  const double eta = share > 0 ? elapsed * (1 - share) / share : -1;
  char b[512];
  if (total_) {
    std::snprintf(b, sizeof b, "[%s] %.0f/%zu  %3.0f %%  %.2f /s  elapsed %s  ETA %s%s%s", name_.c_str(), done, total_,
                  100 * share, elapsed > 0 ? done / elapsed : 0.0, clock_text(elapsed).c_str(), clock_text(eta).c_str(),
                  label.empty() ? "" : "  ", label.c_str());
  } else {
    std::snprintf(b, sizeof b, "[%s] %5.1f %%  elapsed %s  ETA %s%s%s", name_.c_str(), 100 * share,
                  clock_text(elapsed).c_str(), clock_text(eta).c_str(), label.empty() ? "" : "  ", label.c_str());
  }
  if (tty_) std::fprintf(stderr, "\r%s\033[K%s", b, last ? "\n" : "");
  else std::fprintf(stderr, "%s\n", b);
  std::fflush(stderr);
  printed_ = true;
  held_ = false;
  last_print_ = now;
}

}  // namespace indexsim::sim
