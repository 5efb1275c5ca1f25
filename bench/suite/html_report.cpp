#include "bench/suite/html_report.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <vector>

extern char** environ;

namespace kiln::bench {

std::string write_html_report(const std::filesystem::path& json, const std::filesystem::path& html,
                              const std::filesystem::path& log) {
  std::vector<std::string> args = {"python3",     "-m", "kiln.bench_report",
                                   json.string(), "-o", html.string()};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int started = posix_spawnp(&pid, "python3", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (started != 0) return std::string("cannot start python3: ") + std::strerror(started);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return std::string("waiting for python3: ") + std::strerror(errno);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return "python3 -m kiln.bench_report failed (needs the kiln Python package and matplotlib: "
         "scripts/install-python-deps.sh); its output is in " +
         log.string();
}

}  // namespace kiln::bench
