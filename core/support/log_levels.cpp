#include "core/support/log_levels.h"

#include <array>
#include <utility>

namespace kiln {
namespace {

constexpr std::array<std::pair<std::string_view, LogLevel>, 6> kLevelNames{{
    {"trace", LogLevel::Trace},
    {"debug", LogLevel::Debug},
    {"info", LogLevel::Info},
    {"warn", LogLevel::Warn},
    {"error", LogLevel::Error},
    {"off", LogLevel::Off},
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

LogLevel LogLevels::for_component(std::string_view component) const {
  auto it = components.find(component);
  return it == components.end() ? default_level : it->second;
}

Result<LogLevel> parse_log_level(std::string_view name) {
  for (const auto& [level_name, level] : kLevelNames) {
    if (level_name == name) return level;
  }
  return Error::user("unknown log level '" + std::string(name) +
                     "' (expected trace, debug, info, warn, error or off)");
}

std::string_view log_level_name(LogLevel level) {
  for (const auto& [level_name, value] : kLevelNames) {
    if (value == level) return level_name;
  }
  return "unknown";
}

Result<LogLevels> parse_log_spec(std::string_view spec) {
  LogLevels levels;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string_view::npos) end = spec.size();
    const std::string_view item = trim(spec.substr(start, end - start));
    start = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      auto level = parse_log_level(item);
      if (!level)
        return Error(level.error()).with_context("in log spec '" + std::string(spec) + "'");
      levels.default_level = *level;
      continue;
    }
    const std::string_view component = trim(item.substr(0, eq));
    if (component.empty()) {
      return Error::user("log spec '" + std::string(spec) + "': item '" + std::string(item) +
                         "' has no component name before '='");
    }
    auto level = parse_log_level(trim(item.substr(eq + 1)));
    if (!level) return Error(level.error()).with_context("in log spec '" + std::string(spec) + "'");
    levels.components[std::string(component)] = *level;
  }
  return levels;
}

}  // namespace kiln
