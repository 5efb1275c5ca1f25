// Progress shown on a terminal or in a log. A terminal gets one bar redrawn in place; a log
// (not a TTY) gets plain lines, so nothing is lost in a file. `kiln bench` draws its cells
// with progress_bar; CompileProgress follows a long compile for the kiln commands.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace kiln {

// "[#####...................] 5/24 what", at most 100 characters.
std::string progress_bar(size_t done, size_t total, std::string_view what);

// On a terminal: `line` over the `drawn` characters there now (the cursor back at the line's
// start first), and `drawn` becomes its width; clear_line blanks them.
void redraw_line(std::FILE* out, std::string line, size_t& drawn);
void clear_line(std::FILE* out, size_t& drawn);

// A compile's units done of all (Logging::set_progress): on a terminal a bar once the compile
// has taken `bar_after_s`, cleared when it ends; in a log a plain line every `line_every_s`
// of a compile longer than that, and one when it ends. Thread-safe.
class CompileProgress {
 public:
  CompileProgress(std::FILE* out, bool tty, double bar_after_s = 1.0, double line_every_s = 10.0);
  void report(std::string_view stage, size_t done, size_t total);

 private:
  double seconds() const;
  std::FILE* out_;
  bool tty_;
  double bar_after_s_, line_every_s_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double last_line_s_ = 0;
  bool printed_ = false;
  size_t drawn_ = 0;  // width of the bar on screen
};

}  // namespace kiln
