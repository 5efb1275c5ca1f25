#include "bench/suite/progress.h"

#include <unistd.h>

#include <algorithm>

#include "core/support/progress_line.h"

namespace kiln::bench {

Progress::Progress(size_t total, std::FILE* out)
    : total_(std::max<size_t>(total, 1)), out_(out), tty_(isatty(fileno(out)) == 1) {}

void Progress::draw(size_t done, const std::string& what) {
  std::string line = progress_bar(done, total_, what);
  const size_t width = line.size();
  if (width < drawn_) line += std::string(drawn_ - width, ' ');
  std::fprintf(out_, "\r%s", line.c_str());
  std::fflush(out_);
  drawn_ = width;
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
  std::fprintf(out_, "\r%s%s\n", line.c_str(),
               line.size() < drawn_ ? std::string(drawn_ - line.size(), ' ').c_str() : "");
  drawn_ = 0;
  draw(done, "");
}

void Progress::close() {
  if (tty_ && drawn_ > 0) {
    std::fprintf(out_, "\r%s\r", std::string(drawn_, ' ').c_str());
    std::fflush(out_);
  }
}

}  // namespace kiln::bench
