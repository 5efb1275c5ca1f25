// Named spdlog loggers, one per component ("config", "loader", "sched", "plugin.ptx", ...),
// each at the level LogLevels gives it. A Logging object is created from the Options and
// passed where it is needed; nothing is registered globally.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/support/log_levels.h"

namespace spdlog {
class logger;
namespace sinks {
class sink;
}
}  // namespace spdlog

namespace kiln {

class Logging {
 public:
  // Logs to stderr.
  explicit Logging(LogLevels levels);
  // Logs to `sink` (tests capture output this way).
  Logging(LogLevels levels, std::shared_ptr<spdlog::sinks::sink> sink);
  ~Logging();
  Logging(const Logging&) = delete;
  Logging& operator=(const Logging&) = delete;

  // The logger of `component`, created on first use. Thread-safe.
  std::shared_ptr<spdlog::logger> get(std::string_view component) const;

  const LogLevels& levels() const { return levels_; }

  // How far a long stage is ("compiling kernels": `done` of `total`), for a progress display
  // the command that owns the terminal sets before it compiles. Called from any thread.
  using ProgressFn = std::function<void(std::string_view stage, size_t done, size_t total)>;
  void set_progress(ProgressFn fn) { progress_ = std::move(fn); }
  void progress(std::string_view stage, size_t done, size_t total) const {
    if (progress_) progress_(stage, done, total);
  }

 private:
  ProgressFn progress_;
  LogLevels levels_;
  std::shared_ptr<spdlog::sinks::sink> sink_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, std::shared_ptr<spdlog::logger>> loggers_;
};

}  // namespace kiln
