// Loading plugins: ABI negotiation, every failure the loader must name, and lifetimes.
#include "core/runtime/plugin_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <filesystem>
#include <fstream>

#include "core/support/logging.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

using test::plugin_dir;
using test::test_plugin_dir;

using ::testing::HasSubstr;

class PluginLoaderTest : public ::testing::Test {
 protected:
  Logging logging{LogLevels{}, std::make_shared<spdlog::sinks::null_sink_mt>()};

  static std::string test_plugin(const std::string& name) {
    return test_plugin_dir() + "/kiln_test_" + name + ".so";
  }

  Result<std::shared_ptr<const Plugin>> load_test(const std::string& name,
                                                  AbiVersion host = kHostAbi) {
    return load_plugin(PluginConfig{"test_" + name, "", {}}, test_plugin(name), logging, host);
  }

  std::string error_of(const std::string& name, AbiVersion host = kHostAbi) {
    auto plugin = load_test(name, host);
    EXPECT_FALSE(plugin) << name << " should not load";
    if (plugin) return {};
    EXPECT_TRUE(plugin.error().is_user());
    return plugin.error().to_string();
  }
};

TEST_F(PluginLoaderTest, OlderMinorLoadsAndItsMissingTailIsNull) {
  // A host at 1.2 meets a plugin built for 1.0 whose table ends before the externs.
  auto plugin = load_test("older_minor", AbiVersion{KILN_ABI_MAJOR, 2});
  ASSERT_TRUE(plugin) << plugin.error().to_string();
  EXPECT_EQ((*plugin)->plugin_abi().minor, 0u);
  EXPECT_EQ((*plugin)->negotiated_abi().minor, 0u);
  EXPECT_EQ((*plugin)->attributes().vendor, "negotiated 1.0");
  EXPECT_EQ((*plugin)->api().extern_names, nullptr);
  EXPECT_EQ((*plugin)->api().extern_call, nullptr);
  EXPECT_THAT((*plugin)->require((*plugin)->api().extern_names, "extern_names").error().to_string(),
              HasSubstr("plugin 'test_older_minor' does not support extern_names"));
}

TEST_F(PluginLoaderTest, NewerMinorIsNegotiatedDownToTheHost) {
  auto plugin = load_test("newer_minor");
  ASSERT_TRUE(plugin) << plugin.error().to_string();
  EXPECT_EQ((*plugin)->plugin_abi().minor, KILN_ABI_MINOR + 7u);
  EXPECT_EQ((*plugin)->negotiated_abi().minor, uint32_t{KILN_ABI_MINOR});
  // The plugin was told the negotiated minor at create time.
  EXPECT_EQ((*plugin)->attributes().vendor,
            "negotiated " + std::to_string(KILN_ABI_MAJOR) + "." + std::to_string(KILN_ABI_MINOR));
  EXPECT_NE((*plugin)->api().extern_names, nullptr);
}

TEST_F(PluginLoaderTest, OtherMajorIsRefused) {
  EXPECT_THAT(error_of("other_major"),
              HasSubstr("ABI major mismatch: the plugin speaks 2.0, this host 1."));
  EXPECT_THAT(error_of("other_major"),
              HasSubstr("loading plugin 'test_other_major' from " + test_plugin("other_major")));
}

TEST_F(PluginLoaderTest, FailingInitIsReportedWithThePluginsMessage) {
  EXPECT_THAT(error_of("init_fails"),
              HasSubstr("initialization failed: simulated init failure: no device (DEVICE_ERROR)"));
}

TEST_F(PluginLoaderTest, MissingRequiredFunctionIsNamed) {
  EXPECT_THAT(error_of("missing_required"),
              HasSubstr("required function(s) missing from the plugin table: device_count"));
}

TEST_F(PluginLoaderTest, DecliningPluginIsReported) {
  EXPECT_THAT(error_of("declines"), HasSubstr("the plugin declined host ABI"));
}

TEST_F(PluginLoaderTest, NoEntryPointIsNotAPlugin) {
  EXPECT_THAT(error_of("no_entry"),
              HasSubstr("not a kiln plugin: it does not export kiln_plugin_get_api"));
}

TEST_F(PluginLoaderTest, FileHoldingAnotherPluginIsRefused) {
  EXPECT_THAT(error_of("wrong_name"),
              HasSubstr("the file holds plugin 'somebody_else', not 'test_wrong_name'"));
}

TEST_F(PluginLoaderTest, NotASharedObject) {
  const auto path = std::filesystem::temp_directory_path() / "kiln_not_a_library.so";
  std::ofstream(path) << "this is text, not ELF\n";
  auto plugin = load_plugin(PluginConfig{"bogus", "", {}}, path.string(), logging);
  ASSERT_FALSE(plugin);
  EXPECT_THAT(plugin.error().to_string(), HasSubstr("cannot open the shared object"));
  EXPECT_THAT(plugin.error().to_string(), HasSubstr(path.string()));
  std::filesystem::remove(path);
}

TEST_F(PluginLoaderTest, MissingFileListsWhereItLooked) {
  auto path = find_plugin_file(PluginConfig{"nowhere", "", {}}, {"/a", "/b"});
  ASSERT_FALSE(path);
  EXPECT_THAT(path.error().to_string(),
              HasSubstr("kiln_nowhere.so not found in the plugin path [/a, /b]"));
  auto explicit_path = find_plugin_file(PluginConfig{"x", "/no/such/kiln_x.so", {}}, {});
  ASSERT_FALSE(explicit_path);
  EXPECT_THAT(explicit_path.error().to_string(),
              HasSubstr("plugin file not found: /no/such/kiln_x.so"));
}

TEST_F(PluginLoaderTest, OneBadPluginDoesNotStopTheOthers) {
  Options options;
  options.plugins = {PluginConfig{"missing", "", {}}, PluginConfig{"test_init_fails", "", {}},
                     PluginConfig{"null", "", {}}};
  options.plugin_path = {test_plugin_dir(), plugin_dir()};
  const LoadedPlugins loaded = load_plugins(options, logging);
  ASSERT_EQ(loaded.plugins.size(), 1u);
  EXPECT_EQ(loaded.plugins[0]->name(), "null");
  ASSERT_EQ(loaded.failures.size(), 2u);
  EXPECT_EQ(loaded.failures[0].name, "missing");
  EXPECT_TRUE(loaded.failures[0].path.empty());
  EXPECT_EQ(loaded.failures[1].name, "test_init_fails");
  EXPECT_EQ(loaded.failures[1].path, test_plugin("init_fails"));
}

TEST_F(PluginLoaderTest, NullTemplateLoadsAndAnswersUnimplemented) {
  auto plugin = load_plugin(PluginConfig{"null", "", {}}, plugin_dir() + "/kiln_null.so", logging);
  ASSERT_TRUE(plugin) << plugin.error().to_string();
  EXPECT_EQ((*plugin)->attributes().vendor, "kiln SDK template");
  EXPECT_TRUE((*plugin)->devices().empty());
  const auto& api = (*plugin)->api();
  ASSERT_NE(api.compile, nullptr);
  kiln_compile_args args{};
  args.struct_size = sizeof(args);
  kiln_blob* artifact = nullptr;
  kiln_blob* metadata = nullptr;
  Status status =
      (*plugin)->check(api.compile((*plugin)->instance(), &args, &artifact, &metadata), "compile");
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().to_string(),
              HasSubstr("compile failed: compile is not implemented (UNIMPLEMENTED)"));
  uint64_t address = 0;
  status = (*plugin)->check(api.mem_alloc((*plugin)->instance(), 0, 16, 16, &address), "mem_alloc");
  EXPECT_THAT(status.error().to_string(), HasSubstr("UNIMPLEMENTED"));
}

TEST_F(PluginLoaderTest, PluginOptionsReachThePlugin) {
  PluginConfig config{"null", "", {PluginOption{"speed", {"fast"}, false}}};
  auto plugin = load_plugin(config, plugin_dir() + "/kiln_null.so", logging);
  ASSERT_FALSE(plugin);
  EXPECT_THAT(plugin.error().to_string(), HasSubstr("unknown option 'speed'"));
}

}  // namespace
}  // namespace kiln
