// The cpp_openmp plugin's precompiled runtime header: made once under its directory, checked
// before every use, made again when damaged, and never in the way of a compile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/runtime/plugin_loader.h"
#include "core/support/logging.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kKir =
    "kir/1\nkernel k0_sin pointwise\n  buffer in0 f32 7 in\n  buffer out0 f32 7 out\n"
    "  ranges 7\n  %0 = load f32 in0[x0]\n  %1 = sin f32 %0\n  store out0[x0] %1\nend\n";

class CpuPrecompiledHeaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("kiln_pch_test_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::shared_ptr<const Plugin> load(const std::string& header_cache) {
    auto plugin = load_plugin(
        PluginConfig{"cpp_openmp", "", {PluginOption{"header_cache", {header_cache}, false}}},
        test::plugin_dir() + "/kiln_cpp_openmp.so", logging_);
    EXPECT_TRUE(plugin) << plugin.error().to_string();
    return plugin ? *plugin : nullptr;
  }

  // Compiles the sine kernel; the error text, "" when it compiled.
  static std::string compile(const Plugin& plugin) {
    kiln_compile_args args{};
    args.struct_size = sizeof(args);
    args.kir_text = kKir;
    args.kir_size = std::strlen(kKir);
    args.config = "";
    kiln_blob* artifact = nullptr;
    const Status status =
        plugin.check(plugin.api().compile(plugin.instance(), &args, &artifact, nullptr), "compile");
    if (artifact) plugin.api().blob_destroy(artifact);
    return status ? "" : status.error().to_string();
  }

  std::vector<fs::path> entries() const {
    std::vector<fs::path> found;
    std::error_code ec;
    for (const auto& item : fs::directory_iterator(root_, ec)) found.push_back(item.path());
    return found;
  }

  static std::string bytes_of(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path root_;
  std::ostringstream logged_;
  Logging logging_{LogLevels{}, std::make_shared<spdlog::sinks::ostream_sink_mt>(logged_)};
};

TEST_F(CpuPrecompiledHeaderTest, TheFirstCompileMakesOneEntryAndLaterPluginsReuseIt) {
  {
    auto plugin = load(root_.string());
    ASSERT_NE(plugin, nullptr);
    EXPECT_EQ(compile(*plugin), "");
  }
  const auto made = entries();
  ASSERT_EQ(made.size(), 1u) << logged_.str();
  const fs::path gch = made[0] / "kiln_cpu_runtime.h.gch";
  ASSERT_TRUE(fs::exists(gch));
  ASSERT_TRUE(fs::exists(made[0] / "kiln_cpu_runtime.h"));
  const auto first_write = fs::last_write_time(gch);
  auto again = load(root_.string());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(compile(*again), "");
  EXPECT_EQ(entries(), made);
  EXPECT_EQ(fs::last_write_time(gch), first_write);
  // The directory is the user's alone: a precompiled header is code the compiler trusts.
  struct stat info {};
  ASSERT_EQ(::stat(root_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 077, 0u);
}

TEST_F(CpuPrecompiledHeaderTest, ADamagedEntryIsMadeAgainNotUsed) {
  {
    auto plugin = load(root_.string());
    ASSERT_NE(plugin, nullptr);
    ASSERT_EQ(compile(*plugin), "");
  }
  const fs::path gch = entries().at(0) / "kiln_cpu_runtime.h.gch";
  const std::string good = bytes_of(gch);
  std::string damaged = good;
  damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 0x5a);
  std::ofstream(gch, std::ios::binary | std::ios::trunc) << damaged;
  auto plugin = load(root_.string());
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(compile(*plugin), "");
  ASSERT_EQ(entries().size(), 1u);
  EXPECT_NE(bytes_of(entries()[0] / "kiln_cpu_runtime.h.gch"), damaged);
}

TEST_F(CpuPrecompiledHeaderTest, AnEntryRemovedWhileInUseDoesNotFailTheCompile) {
  auto plugin = load(root_.string());
  ASSERT_NE(plugin, nullptr);
  ASSERT_EQ(compile(*plugin), "");
  fs::remove_all(root_);
  EXPECT_EQ(compile(*plugin), "");
}

TEST_F(CpuPrecompiledHeaderTest, ADirectoryOthersMayWriteIsRefusedWithTheReason) {
  fs::create_directories(root_);
  ::chmod(root_.c_str(), 0777);
  auto plugin = load(root_.string());
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(compile(*plugin), "");
  EXPECT_TRUE(entries().empty());
  EXPECT_THAT(logged_.str(), HasSubstr("without a precompiled header: " + root_.string() +
                                       " belongs to another user or others may write to it"));
}

TEST_F(CpuPrecompiledHeaderTest, OffWritesNothing) {
  auto plugin = load("off");
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(compile(*plugin), "");
  EXPECT_FALSE(fs::exists(root_));
  EXPECT_FALSE(fs::exists("off"));
}

}  // namespace
}  // namespace kiln
