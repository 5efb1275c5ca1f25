#include "core/support/log_levels.h"

#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <sstream>

#include "core/support/logging.h"

namespace kiln {
namespace {

TEST(LogSpec, DefaultAndComponents) {
  auto levels = parse_log_spec("warn,sched=debug, cache = trace");
  ASSERT_TRUE(levels) << levels.error().to_string();
  EXPECT_EQ(levels->default_level, LogLevel::Warn);
  EXPECT_EQ(levels->for_component("sched"), LogLevel::Debug);
  EXPECT_EQ(levels->for_component("cache"), LogLevel::Trace);
  EXPECT_EQ(levels->for_component("graph"), LogLevel::Warn);
}

TEST(LogSpec, ComponentOnlyKeepsInfoDefault) {
  auto levels = parse_log_spec("sched=error");
  ASSERT_TRUE(levels);
  EXPECT_EQ(levels->default_level, LogLevel::Info);
  EXPECT_EQ(levels->for_component("sched"), LogLevel::Error);
}

TEST(LogSpec, BadLevelNamesTheItem) {
  auto levels = parse_log_spec("info,sched=loud");
  ASSERT_FALSE(levels);
  EXPECT_TRUE(levels.error().is_user());
  EXPECT_NE(levels.error().to_string().find("unknown log level 'loud'"), std::string::npos);
  EXPECT_NE(levels.error().to_string().find("info,sched=loud"), std::string::npos);
}

TEST(LogSpec, MissingComponentName) {
  auto levels = parse_log_spec("=debug");
  ASSERT_FALSE(levels);
  EXPECT_NE(levels.error().message().find("no component name"), std::string::npos);
}

TEST(Logging, EachComponentFiltersAtItsLevel) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  auto levels = parse_log_spec("warn,sched=debug,plugin=debug,plugin.ptx=error");
  ASSERT_TRUE(levels);
  Logging logging(*levels, sink);
  logging.get("sched")->debug("sched-debug-shown");
  logging.get("cache")->info("cache-info-hidden");
  logging.get("cache")->warn("cache-warn-shown");
  logging.get("plugin.cpp_openmp")->debug("family-level-shown");
  logging.get("plugin.ptx")->warn("own-level-hidden");
  const std::string text = out.str();
  EXPECT_NE(text.find("sched-debug-shown"), std::string::npos);
  EXPECT_EQ(text.find("cache-info-hidden"), std::string::npos);
  EXPECT_NE(text.find("cache-warn-shown"), std::string::npos);
  EXPECT_NE(text.find("family-level-shown"), std::string::npos);
  EXPECT_EQ(text.find("own-level-hidden"), std::string::npos);
  EXPECT_EQ(logging.get("sched"), logging.get("sched"));
}

}  // namespace
}  // namespace kiln
