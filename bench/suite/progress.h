// Progress of a long run: on a terminal one bar redrawn in place; otherwise (a log, CI) one
// plain line per finished step, so nothing is lost in a file.
#pragma once

#include <cstdio>
#include <string>

namespace kiln::bench {

class Progress {
 public:
  // `out` is a terminal when isatty says so (then the bar), else plain lines.
  Progress(size_t total, std::FILE* out);
  // Step `done + 1` of `total` starts: `what` is what it does.
  void starting(size_t done, const std::string& what);
  // A step ended: `line` is its result (printed above the bar, or as its plain line).
  void finished(size_t done, const std::string& line);
  // Clears the bar (nothing on plain lines).
  void close();

 private:
  void draw(size_t done, const std::string& what);
  size_t total_;
  std::FILE* out_;
  bool tty_;
  size_t drawn_ = 0;  // width of the bar line on screen
};

}  // namespace kiln::bench
