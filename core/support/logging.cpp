#include "core/support/logging.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace kiln {
namespace {

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::Trace:
      return spdlog::level::trace;
    case LogLevel::Debug:
      return spdlog::level::debug;
    case LogLevel::Info:
      return spdlog::level::info;
    case LogLevel::Warn:
      return spdlog::level::warn;
    case LogLevel::Error:
      return spdlog::level::err;
    case LogLevel::Off:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

}  // namespace

Logging::Logging(LogLevels levels)
    : Logging(std::move(levels), std::make_shared<spdlog::sinks::stderr_color_sink_mt>()) {}

Logging::Logging(LogLevels levels, std::shared_ptr<spdlog::sinks::sink> sink)
    : levels_(std::move(levels)), sink_(std::move(sink)) {
  sink_->set_pattern("[%L %n] %v");
}

Logging::~Logging() = default;

std::shared_ptr<spdlog::logger> Logging::get(std::string_view component) const {
  std::lock_guard lock(mutex_);
  auto it = loggers_.find(std::string(component));
  if (it != loggers_.end()) return it->second;
  auto logger = std::make_shared<spdlog::logger>(std::string(component), sink_);
  // A component "plugin.ptx" takes the level of "plugin.ptx", else of "plugin".
  LogLevel level = levels_.default_level;
  const std::string_view family = component.substr(0, component.find('.'));
  if (levels_.components.count(family) != 0) level = levels_.for_component(family);
  if (levels_.components.count(component) != 0) level = levels_.for_component(component);
  logger->set_level(to_spdlog(level));
  loggers_.emplace(std::string(component), logger);
  return logger;
}

}  // namespace kiln
