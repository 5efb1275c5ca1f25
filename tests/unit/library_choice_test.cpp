// Library call or generated kernels per shape (autotune exhaustive with libraries): each
// convolution shape is timed both ways and its choice cached; the compiled graph obeys the
// cached choices (a cache saying "generated" gives generated kernels that match the reference),
// and schedule.library_conv false never calls the convolution library (a matmul library may
// take the product). Needs a plugin offering conv2d
// (oneDNN on cpp_openmp); skipped, saying so, without one.
#include "core/tune/library_choice.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>

#include "core/lower/library_call_signature.h"
#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

namespace fs = std::filesystem;

class LibraryChoice : public Differential {
 protected:
  void SetUp() override {
    if (!offers_extern("conv2d", DType::F32))
      GTEST_SKIP() << "the plugin under test offers no conv2d library call";
    dir_ = fs::temp_directory_path() /
           ("kiln_library_choice_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  DiskCache cache(const std::string& sub) const {
    return DiskCache(
        (dir_ / sub).string(), int64_t{1} << 30,
        std::make_shared<spdlog::logger>("cache", std::make_shared<spdlog::sinks::null_sink_mt>()));
  }

  // Two convolution shapes (a 3x3 and a strided depthwise one) and a pointwise op after them.
  Graph two_convolutions() {
    GraphBuilder b = builder();
    const auto c = [](Shape s) { return TensorType::contiguous(DType::F32, std::move(s)); };
    const ValueRef x = input(b, "x", c({2, 6, 9, 11}));
    const ValueRef w = input(b, "w", c({8, 6, 3, 3}));
    const ValueRef dw = input(b, "dw", c({8, 1, 3, 3}));
    const ValueRef y =
        b.op("aten.convolution.default",
             {x, w, None{}, ints{1, 1}, ints{1, 1}, ints{1, 1}, false, ints{0, 0}, int64_t{1}});
    const ValueRef z =
        b.op("aten.convolution.default",
             {y, dw, None{}, ints{2, 2}, ints{1, 1}, ints{1, 1}, false, ints{0, 0}, int64_t{8}});
    b.output(b.op("aten.relu.default", {z}));
    auto g = b.finish();
    EXPECT_TRUE(g) << g.error().to_string();
    return *g;
  }

  // The signatures of the conv2d calls `g`'s program makes.
  static std::vector<std::string> signatures(const CompiledGraph& g) {
    std::vector<std::string> out;
    for (const LoopKernel& k : g.program().kernels)
      if (k.kind == LoopKernelKind::Extern && k.extern_name == "conv2d")
        out.push_back(library_call_signature(k));
    return out;
  }

  static AutotuneOptions exhaustive() {
    AutotuneOptions a;
    a.kernels = KernelTuning::Exhaustive;
    a.warmup = 1;
    a.reps = 3;
    return a;
  }

  fs::path dir_;
};

TEST_F(LibraryChoice, EachShapeIsTimedOnceAndTheCompiledGraphFollowsTheChoice) {
  const Graph graph = two_convolutions();
  auto heuristic = compile(graph, {}, {}, cache("heuristic"));
  ASSERT_TRUE(heuristic) << heuristic.error().to_string();
  const std::vector<std::string> calls = signatures(*heuristic);
  ASSERT_EQ(calls.size(), 2u) << "without tuning, both convolutions call the library";

  const DiskCache tuned_cache = cache("tuned");
  auto tuned = compile(graph, {}, exhaustive(), tuned_cache);
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  size_t library = 0;
  for (const std::string& sig : calls) {
    const auto choice = tuned_cache.get(library_choice_key(sig, plugin(), 0, exhaustive()));
    ASSERT_TRUE(choice) << "no cached choice for " << sig;
    EXPECT_TRUE(*choice == "library" || *choice == "generated") << *choice;
    library += *choice == "library";
  }
  EXPECT_EQ(signatures(*tuned).size(), library) << "one conv2d call per shape the library won";
}

TEST_F(LibraryChoice, ACachedGeneratedChoiceGivesGeneratedKernelsThatMatchTheReference) {
  const Graph graph = two_convolutions();
  auto heuristic = compile(graph, {}, {}, cache("heuristic"));
  ASSERT_TRUE(heuristic) << heuristic.error().to_string();
  const DiskCache forced = cache("forced");
  const std::vector<std::string> calls = signatures(*heuristic);
  ASSERT_EQ(calls.size(), 2u);
  forced.put(library_choice_key(calls[0], plugin(), 0, exhaustive()), "generated");
  forced.put(library_choice_key(calls[1], plugin(), 0, exhaustive()), "library");
  auto tuned = compile(graph, {}, exhaustive(), forced);
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  EXPECT_EQ(signatures(*tuned), std::vector<std::string>{calls[1]});
  EXPECT_EQ(tuned->stats().host_steps, 0u);

  // The same program (declined by signature) against the reference.
  ScheduleOptions declined;
  declined.declined_library_calls = {calls[0]};
  set_schedule(declined);
  check(graph);
  auto again = compile(graph, declined);
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(signatures(*again), std::vector<std::string>{calls[1]});
}

TEST_F(LibraryChoice, LibraryConvOffGeneratesEveryConvolution) {
  ScheduleOptions off;
  off.library_conv = false;
  auto g = compile(two_convolutions(), off, {}, cache("off"));
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_TRUE(signatures(*g).empty());
  for (const LoopKernel& k : g->program().kernels) {  // the 3x3 may be a matmul product
    if (k.kind == LoopKernelKind::Extern) {
      EXPECT_TRUE(k.extern_name == "mm" || k.extern_name == "bmm") << k.extern_name;
    }
  }
  EXPECT_GT(g->stats().kernels, 0u);
}

}  // namespace
}  // namespace kiln::test
