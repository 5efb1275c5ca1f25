#include "core/support/progress_line.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln {

std::string progress_bar(size_t done, size_t total, std::string_view what) {
  constexpr size_t kWidth = 24;
  const size_t whole = std::max<size_t>(total, 1);
  const size_t filled = kWidth * std::min(done, whole) / whole;
  std::string line = fmt::format("[{}{}] {}/{} {}", std::string(filled, '#'),
                                 std::string(kWidth - filled, '.'), done, total, what);
  if (line.size() > 100) line = line.substr(0, 97) + "...";
  return line;
}

void redraw_line(std::FILE* out, std::string line, size_t& drawn) {
  const size_t width = line.size();
  if (width < drawn) line += std::string(drawn - width, ' ');
  std::fprintf(out, "\r%s", line.c_str());
  drawn = width;
}

void clear_line(std::FILE* out, size_t& drawn) {
  if (drawn > 0) std::fprintf(out, "\r%s\r", std::string(drawn, ' ').c_str());
  drawn = 0;
}

CompileProgress::CompileProgress(std::FILE* out, bool tty, double bar_after_s, double line_every_s)
    : out_(out), tty_(tty), bar_after_s_(bar_after_s), line_every_s_(line_every_s) {}

double CompileProgress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void CompileProgress::report(std::string_view stage, size_t done, size_t total) {
  std::lock_guard lock(mutex_);
  const double now = seconds();
  const bool last = done >= total;
  if (tty_) {
    if (last)
      clear_line(out_, drawn_);
    else if (now >= bar_after_s_)
      redraw_line(out_, progress_bar(done, total, stage), drawn_);
  } else if ((last && printed_) || (!last && now >= line_every_s_ &&
                                    (!printed_ || now - last_line_s_ >= line_every_s_))) {
    std::fprintf(out_, "kiln: %s: %zu of %zu done (%.0f s)\n", std::string(stage).c_str(), done,
                 total, now);
    printed_ = true;
    last_line_s_ = now;
  }
  std::fflush(out_);
}

}  // namespace kiln
