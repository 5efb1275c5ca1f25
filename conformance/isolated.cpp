#include "conformance/isolated.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <string>

namespace kiln::conformance {
namespace {

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

Finding run_isolated(const std::function<Finding()>& body, int timeout_seconds) {
  int fds[2];
  // Close-on-exec: a compiler the plugin runs must not hold the pipe open past the check.
  if (pipe2(fds, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + std::strerror(errno));
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return fail(std::string("fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    setpgid(0, 0);  // its own group: a timeout kills whatever the check started too
    close(fds[0]);
    Finding f;
    try {
      f = body();
    } catch (const std::exception& e) {
      f = fail(std::string("threw: ") + e.what());
    }
    write_all(fds[1], std::string(1, "PFS"[static_cast<int>(f.verdict)]) + f.detail);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) {
    kill(-child, SIGKILL);
    kill(child, SIGKILL);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (timed_out) return fail("no answer in " + std::to_string(timeout_seconds) + " s (killed)");
  if (WIFSIGNALED(status))
    return fail(std::string("crashed: ") + strsignal(WTERMSIG(status)) + " (signal " +
                std::to_string(WTERMSIG(status)) + ")");
  if (text.empty()) return fail("the check's process ended without an answer");
  const Verdict v = text[0] == 'P' ? Verdict::Pass : text[0] == 'S' ? Verdict::Skip : Verdict::Fail;
  return {v, text.substr(1)};
}

}  // namespace kiln::conformance
