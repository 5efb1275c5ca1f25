// Log levels per component, parsed from the config or from a spec such as
// "info,sched=debug" (a default level, then component=level pairs).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/support/result.h"

namespace kiln {

enum class LogLevel { Trace, Debug, Info, Warn, Error, Off };

struct LogLevels {
  LogLevel default_level = LogLevel::Info;
  std::map<std::string, LogLevel, std::less<>> components;

  LogLevel for_component(std::string_view component) const;
  bool operator==(const LogLevels&) const = default;
};

Result<LogLevel> parse_log_level(std::string_view name);
std::string_view log_level_name(LogLevel level);

// "info", "sched=debug", "warn,sched=debug,cache=trace". Errors name the bad item.
Result<LogLevels> parse_log_spec(std::string_view spec);

}  // namespace kiln
