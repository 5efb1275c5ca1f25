#include "bench/suite/progress.h"

#include <unistd.h>

#include <algorithm>

#include "core/support/progress_line.h"

namespace kiln::bench {

Progress::Progress(size_t total, std::FILE* out)
    : total_(std::max<size_t>(total, 1)), out_(out), tty_(isatty(fileno(out)) == 1) {}

void Progress::draw(size_t done, const std::string& what) {
  redraw_line(out_, progress_bar(done, total_, what), drawn_);
  std::fflush(out_);
}

void Progress::starting(size_t done, const std::string& what) {
  if (tty_) draw(done, what);
}

void Progress::finished(size_t done, const std::string& line) {
  if (!tty_) {
    std::fprintf(out_, "[%zu/%zu] %s\n", done, total_, line.c_str());
    std::fflush(out_);
    return;
  }
  // The result above, the bar again below it.
  redraw_line(out_, line, drawn_);
  std::fputc('\n', out_);
  drawn_ = 0;
  draw(done, "");
}

void Progress::close() {
  if (!tty_) return;
  clear_line(out_, drawn_);
  std::fflush(out_);
}

}  // namespace kiln::bench
