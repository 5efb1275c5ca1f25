#include "bench/suite/progress.h"

#include <unistd.h>

#include <algorithm>

namespace kiln::bench {

Progress::Progress(size_t total, std::FILE* out)
    : total_(std::max<size_t>(total, 1)), out_(out), tty_(isatty(fileno(out)) == 1) {}

void Progress::draw(size_t done, const std::string& what) {
  constexpr size_t kWidth = 24;
  const size_t filled = kWidth * std::min(done, total_) / total_;
  std::string line = "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] " +
                     std::to_string(done) + "/" + std::to_string(total_) + " " + what;
  if (line.size() > 100) line = line.substr(0, 97) + "...";
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
