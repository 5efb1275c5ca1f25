#include "bench/suite/python_module.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace kiln::bench {

Result<int> run_python_module(const std::string& module, const std::vector<std::string>& args,
                              const std::filesystem::path& log) {
  std::vector<std::string> words = {"python3", "-m", module};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int started = posix_spawnp(&pid, "python3", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (started != 0)
    return Error::user(std::string("cannot start python3: ") + std::strerror(started));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return Error::user(std::string("waiting for python3: ") + std::strerror(errno));
  }
  if (WIFSIGNALED(status))
    return Error::user("python3 -m " + module + " died of signal " +
                       std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
                       "); its output is in " + log.string());
  return WEXITSTATUS(status);
}

std::string read_file_text(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

std::string log_tail(const std::filesystem::path& path, size_t lines) {
  const std::string text = read_file_text(path);
  size_t at = text.find_last_not_of('\n');
  if (at == std::string::npos) return "";
  const std::string trimmed = text.substr(0, at + 1);
  at = trimmed.size();
  while (lines-- > 0 && at != std::string::npos && at > 0) at = trimmed.rfind('\n', at - 1);
  return at == std::string::npos ? trimmed : trimmed.substr(at + 1);
}

}  // namespace kiln::bench
