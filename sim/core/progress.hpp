// SPDX-License-Identifier: Apache-2.0
// One progress line on stderr for the long commands (run, study, sweep, prefill): what is done,
// the rate, the time elapsed and the estimated time left, and what is being worked on:
//   [study] 3/24  12 %  0.21 /s  elapsed 00:14  ETA 01:32  glm-5 baseline 131072
// On a terminal the line is rewritten in place (at most 10 times a second); in a log (stderr not a
// terminal) each update is its own line, at most one per `log_interval_s` (the last always shows).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace indexsim::sim {

// "mm:ss" or "h:mm:ss"; "--:--" when unknown (negative, NaN or absurdly large).
std::string clock_text(double seconds);

class Progress {
 public:
  // `total` items (a count: shown as done/total; 0: a fraction of 1, shown in per cent).
  Progress(std::string name, size_t total, double log_interval_s = 10);
  // `done` items (or the fraction, for total 0) complete; `label`: what is being worked on now.
  void update(double done, const std::string& label = "");
  // Ends the line (a terminal's needs a newline; a log's last update is printed if it was held).
  void finish();
  bool terminal() const { return tty_; }

 private:
  void print(double done, const std::string& label, bool last);
  std::string name_;
  size_t total_;
  double log_interval_s_;
  bool tty_;
  bool printed_ = false, held_ = false, finished_ = false;
  double held_done_ = 0;
  std::string held_label_;
  std::chrono::steady_clock::time_point start_, last_print_;
};

}  // namespace indexsim::sim
