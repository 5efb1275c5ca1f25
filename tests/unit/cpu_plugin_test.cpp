// The cpp_openmp plugin as far as it goes today: the CPU device, memory, copies, events.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <thread>

#include "core/runtime/device_buffer.h"
#include "core/runtime/plugin_loader.h"
#include "core/runtime/smoke_test.h"
#include "core/support/logging.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

using test::plugin_dir;

using ::testing::HasSubstr;

class CpuPluginTest : public ::testing::Test {
 protected:
  Logging logging{LogLevels{}, std::make_shared<spdlog::sinks::null_sink_mt>()};

  std::shared_ptr<const Plugin> load(std::vector<PluginOption> options = {}) {
    auto plugin = load_plugin(PluginConfig{"cpp_openmp", "", std::move(options)},
                              plugin_dir() + "/kiln_cpp_openmp.so", logging);
    EXPECT_TRUE(plugin) << plugin.error().to_string();
    return plugin ? *plugin : nullptr;
  }
};

TEST_F(CpuPluginTest, ReportsTheHostCpu) {
  auto plugin = load();
  ASSERT_NE(plugin, nullptr);
  ASSERT_EQ(plugin->devices().size(), 1u);
  const DeviceInfo& cpu = plugin->devices()[0];
  EXPECT_EQ(cpu.kind, "cpu");
  const DeviceProperty* cores = cpu.find("compute_units");
  ASSERT_NE(cores, nullptr);
  EXPECT_EQ(std::get<int64_t>(cores->value),
            static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency())));
  for (const char* key :
       {"arch", "isa", "memory_bytes", "l1d_bytes", "l2_bytes", "simd_width_f32"}) {
    EXPECT_NE(cpu.find(key), nullptr) << key;
  }
#if defined(__x86_64__) && defined(__AVX2__)
  EXPECT_THAT(std::get<std::string>(cpu.find("isa")->value), HasSubstr("avx2"));
#endif
}

TEST_F(CpuPluginTest, ThreadsOptionIsParsedAndChecked) {
  auto plugin = load({PluginOption{"threads", {"3"}, false}});
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(std::get<int64_t>(plugin->devices()[0].find("threads")->value), 3);
  auto bad = load_plugin(PluginConfig{"cpp_openmp", "", {PluginOption{"threads", {"lots"}, false}}},
                         plugin_dir() + "/kiln_cpp_openmp.so", logging);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().to_string(),
              HasSubstr("option 'threads' must be 'auto' or a positive integer, got 'lots'"));
}

TEST_F(CpuPluginTest, SmokeRoundTripPasses) {
  auto plugin = load();
  ASSERT_NE(plugin, nullptr);
  for (uint64_t bytes : {uint64_t{1}, uint64_t{4097}, uint64_t{1} << 20}) {
    const SmokeReport report = smoke_test(plugin, 0, bytes, bytes * 31 + 7);
    EXPECT_TRUE(report.passed()) << bytes;
    for (const auto& step : report.steps)
      EXPECT_TRUE(step.passed) << step.name << ": " << step.detail;
  }
}

TEST_F(CpuPluginTest, BadAddressesAreErrorsNotCrashes) {
  auto plugin = load();
  ASSERT_NE(plugin, nullptr);
  const auto& api = plugin->api();
  Status status = plugin->check(api.mem_free(plugin->instance(), 0, 0x1000), "mem_free");
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().to_string(), HasSubstr("did not allocate (INVALID_ARGUMENT)"));
  auto buffer = DeviceBuffer::allocate(plugin, 0, 64);
  ASSERT_TRUE(buffer);
  char host[128] = {};
  // One byte past the end of the allocation.
  status = plugin->check(
      api.copy_host_to_device(plugin->instance(), 0, nullptr, buffer->address() + 1, host, 64),
      "copy_host_to_device");
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().to_string(), HasSubstr("not inside one allocation"));
  uint64_t address = 0;
  status = plugin->check(api.mem_alloc(plugin->instance(), 1, 64, 64, &address), "mem_alloc");
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().to_string(), HasSubstr("device 1 does not exist"));
}

TEST_F(CpuPluginTest, LibraryStaysLoadedWhileABufferLives) {
  Result<DeviceBuffer> buffer = Error::internal("unset");
  {
    auto plugin = load();
    ASSERT_NE(plugin, nullptr);
    buffer = DeviceBuffer::allocate(plugin, 0, 256);
    ASSERT_TRUE(buffer);
  }
  // The only reference to the plugin is the buffer's: using and freeing it must still
  // reach live plugin code (ASan would report an unmapped library).
  std::vector<std::byte> data(256, std::byte{7});
  EXPECT_TRUE(buffer->upload(data));
}

}  // namespace
}  // namespace kiln
