// The ptx plugin's artifacts: the PTX assembled for the device when it compiles (a cubin
// section), loaded as the cubin, or as the PTX where the cubin does not load; damaged
// artifacts refused with why. Needs a CUDA device: skipped, saying so, without one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <cstring>
#include <random>

#include "core/runtime/device_buffer.h"
#include "core/runtime/plugin_loader.h"
#include "core/support/logging.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kCount = 333;
constexpr const char* kKir =
    "kir/1\n"
    "kernel k0_relu pointwise\n"
    "  buffer in0 f32 333 in\n"
    "  buffer out0 f32 333 out\n"
    "  ranges 333\n"
    "  %0 = load f32 in0[x0]\n"
    "  %1 = relu f32 %0\n"
    "  store out0[x0] %1\n"
    "end\n";

class CompiledPtxArtifact : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded =
        load_plugin(PluginConfig{"ptx", "", {}}, test::plugin_dir() + "/kiln_ptx.so", logging_);
    ASSERT_TRUE(loaded) << loaded.error().to_string();
    plugin_ = *loaded;
    if (plugin_->devices().empty()) GTEST_SKIP() << "no CUDA device: the ptx artifact is not built";
  }

  std::string compile() const {
    kiln_compile_args args{sizeof(args), 0, kKir, std::strlen(kKir), ""};
    kiln_blob* artifact = nullptr;
    kiln_blob* metadata = nullptr;
    auto s = plugin_->check(
        plugin_->api().compile(plugin_->instance(), &args, &artifact, &metadata), "compile");
    EXPECT_TRUE(s) << s.error().to_string();
    plugin_->take_blob(metadata);
    return plugin_->take_blob(artifact);
  }

  // Loads `artifact` and runs its kernel on random values: "" when relu's values come back,
  // else what went wrong.
  std::string load_and_run(const std::string& artifact) const {
    kiln_executable* exe = nullptr;
    if (auto s = plugin_->check(
            plugin_->api().load(plugin_->instance(), 0, artifact.data(), artifact.size(), &exe),
            "load");
        !s)
      return s.error().to_string();
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    std::vector<float> in(kCount), out(kCount, 0.0f);
    for (float& v : in) v = normal(rng);
    const uint64_t bytes = kCount * sizeof(float);
    auto a = DeviceBuffer::allocate(plugin_, 0, bytes);
    auto b = DeviceBuffer::allocate(plugin_, 0, bytes);
    std::string failure;
    if (!a || !b) failure = "allocation failed";
    const std::vector<std::byte> poison(bytes, std::byte{0xFF});  // NaN where nothing is written
    if (failure.empty() && !(a->upload(std::as_bytes(std::span(in))) && b->upload(poison)))
      failure = "upload failed";
    if (failure.empty()) {
      const uint64_t buffers[] = {a->address(), b->address()};
      kiln_launch_args launch{sizeof(launch), "k0_relu", buffers, 2, nullptr, 0, nullptr};
      if (auto s = plugin_->check(plugin_->api().launch(exe, &launch), "launch"); !s)
        failure = s.error().to_string();
    }
    if (failure.empty() && !b->download(std::as_writable_bytes(std::span(out))))
      failure = "download failed";
    for (int64_t i = 0; failure.empty() && i < kCount; ++i)
      if (!(out[i] == std::max(in[i], 0.0f))) failure = "element " + std::to_string(i) + " differs";
    plugin_->api().executable_destroy(exe);
    return failure;
  }

  Logging logging_{LogLevels{}, std::make_shared<spdlog::sinks::null_sink_mt>()};
  std::shared_ptr<const Plugin> plugin_;
};

// The section "NAME BYTES\n" starts at the returned offset (npos: none).
size_t section_at(const std::string& artifact, const std::string& name) {
  const size_t at = artifact.find("\n" + name + " ");
  return at == std::string::npos ? at : at + 1;
}

TEST_F(CompiledPtxArtifact, CarriesTheDevicesCodeAndRuns) {
  const std::string artifact = compile();
  EXPECT_NE(section_at(artifact, "ptx"), std::string::npos);
  const size_t cubin = section_at(artifact, "cubin");
  ASSERT_NE(cubin, std::string::npos) << "no cubin: the driver did not assemble the PTX";
  // An ELF image follows the section's line.
  const size_t image = artifact.find('\n', cubin) + 1;
  EXPECT_EQ(artifact.substr(image, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(load_and_run(artifact), "");
}

TEST_F(CompiledPtxArtifact, ACubinThatDoesNotLoadLeavesThePtxToTheDriver) {
  std::string artifact = compile();
  const size_t cubin = section_at(artifact, "cubin");
  ASSERT_NE(cubin, std::string::npos);
  std::string damaged = artifact;
  damaged[artifact.find('\n', cubin) + 1] = 'X';  // no longer an ELF image
  EXPECT_EQ(load_and_run(damaged), "");
  // Without the section (a driver without the linker): the PTX, as before.
  EXPECT_EQ(load_and_run(artifact.substr(0, cubin)), "");
}

TEST_F(CompiledPtxArtifact, DamagedArtifactsAreRefusedWithWhy) {
  const std::string artifact = compile();
  const size_t ptx = section_at(artifact, "ptx");
  ASSERT_NE(ptx, std::string::npos);
  EXPECT_THAT(load_and_run(artifact.substr(0, ptx + 100)),
              HasSubstr("cut short in its ptx section"));
  EXPECT_THAT(load_and_run(artifact.substr(0, ptx)), HasSubstr("without its ptx section"));
  std::string huge = artifact;
  huge.replace(ptx, 3, "ptx 99999999999 ");
  EXPECT_THAT(load_and_run(huge), HasSubstr("cut short in its ptx section"));
  std::string misnamed = artifact;
  misnamed.replace(ptx, 3, "ptq");
  EXPECT_THAT(load_and_run(misnamed), HasSubstr("malformed ptx artifact: 'ptq"));
  std::string old = artifact;
  old.replace(0, std::strlen("kiln-ptx/2"), "kiln-ptx/1");
  EXPECT_THAT(load_and_run(old), HasSubstr("reads kiln-ptx/2"));
}

}  // namespace
}  // namespace kiln
