// Transparent huge pages for fresh host outputs (core/runtime/huge_pages.h): the policy read
// from sysfs text, the advice covering whole huge pages only, and run_into asking for them on
// the outputs kernels write in place, never on memory it only reads or copies into.
#include "core/runtime/huge_pages.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <sys/mman.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "core/graph/graph_json.h"
#include "core/interp/oracle.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/runtime/plugin_loader.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

using Mode = HugePagePolicy::Mode;
constexpr uint64_t kHuge = 2u << 20;  // x86-64's; the advice tests name it, not the OS

// The VmFlags of the mapping holding `address` in /proc/self/smaps ("" when none holds it).
std::string vm_flags_at(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo <= address && address < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
  }
  return "";
}

bool asked_for_huge_pages(uintptr_t address) {
  return vm_flags_at(address).find(" hg ") != std::string::npos;
}

// An anonymous mapping of `bytes` plus one huge page of slack, freed at scope end.
struct Mapping {
  explicit Mapping(size_t bytes) : size(bytes + kHuge) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base = p == MAP_FAILED ? 0 : reinterpret_cast<uintptr_t>(p);
  }
  ~Mapping() {
    if (base) munmap(reinterpret_cast<void*>(base), size);
  }
  // An address one small page past a huge page boundary: its head is not a whole huge page.
  uintptr_t unaligned() const { return ((base + kHuge - 1) & ~(kHuge - 1)) + 4096; }
  size_t size;
  uintptr_t base = 0;
};

TEST(HugePages, ModeIsTheBracketedWord) {
  EXPECT_EQ(parse_huge_page_mode("always [madvise] never\n"), Mode::Madvise);
  EXPECT_EQ(parse_huge_page_mode("[always] madvise never"), Mode::Always);
  EXPECT_EQ(parse_huge_page_mode("always madvise [never]"), Mode::Never);
  EXPECT_EQ(parse_huge_page_mode("always madvise never"), Mode::Unavailable);
  EXPECT_EQ(parse_huge_page_mode("[sometimes]"), Mode::Unavailable);
  EXPECT_EQ(parse_huge_page_mode(""), Mode::Unavailable);
}

TEST(HugePages, PolicyFromTheSysfsFiles) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("kiln-thp-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "enabled") << "always [madvise] never\n";
  std::ofstream(dir / "hpage_pmd_size") << "2097152\n";
  HugePagePolicy p = read_huge_page_policy(dir);
  EXPECT_EQ(p.mode, Mode::Madvise);
  EXPECT_EQ(p.page_bytes, 2097152u);
  EXPECT_TRUE(p.worth_advising());
  std::ofstream(dir / "hpage_pmd_size") << "3000000\n";  // not a page size
  EXPECT_FALSE(read_huge_page_policy(dir).worth_advising());
  std::ofstream(dir / "hpage_pmd_size") << "536870912\n";  // arm64 with 64 KiB pages
  EXPECT_FALSE(read_huge_page_policy(dir).worth_advising()) << "a 512 MiB page per fault";
  std::ofstream(dir / "hpage_pmd_size") << "33554432\n";  // arm64 with 16 KiB pages
  EXPECT_TRUE(read_huge_page_policy(dir).worth_advising());
  std::ofstream(dir / "enabled") << "[always] madvise never\n";
  std::ofstream(dir / "hpage_pmd_size") << "2097152\n";
  EXPECT_FALSE(read_huge_page_policy(dir).worth_advising()) << "`always` needs no advice";
  std::filesystem::remove_all(dir);
  EXPECT_EQ(read_huge_page_policy(dir).mode, Mode::Unavailable) << "no files, no huge pages";
}

TEST(HugePages, AdviceCoversWholeHugePagesOnly) {
  Mapping m(4 * kHuge);
  ASSERT_NE(m.base, 0u);
  const uintptr_t start = m.unaligned();
  const HugePagePolicy madvise_mode{Mode::Madvise, kHuge};
  EXPECT_FALSE(advise_huge_pages(madvise_mode, start, kHuge)) << "no whole huge page inside";
  EXPECT_FALSE(advise_huge_pages(HugePagePolicy{Mode::Always, kHuge}, start, 3 * kHuge));
  if (!advise_huge_pages(madvise_mode, start, 3 * kHuge))
    GTEST_SKIP() << "this kernel refuses MADV_HUGEPAGE (built without transparent huge pages)";
  const uintptr_t first_whole = start - 4096 + kHuge;
  EXPECT_FALSE(asked_for_huge_pages(start)) << vm_flags_at(start);
  EXPECT_TRUE(asked_for_huge_pages(first_whole)) << vm_flags_at(first_whole);
  EXPECT_TRUE(asked_for_huge_pages(first_whole + 2 * kHuge - 1));
  EXPECT_FALSE(asked_for_huge_pages(first_whole + 2 * kHuge)) << "the tail is not a whole page";
}

// run_into on caller memory: the output kernels write in place asks for huge pages; the
// input (read only) does not, nor does anything with the policy off or through copies.
class HugePagesRunInto : public ::testing::TestWithParam<uint32_t> {};

TEST_P(HugePagesRunInto, FreshOutputsWrittenInPlaceAskForHugePages) {
  Logging logging{LogLevels{}, std::make_shared<spdlog::sinks::null_sink_mt>()};
  auto registry = OpRegistry::create().value();
  constexpr int64_t kCount = 3 * kHuge / 4 + 5;  // floats: just over 3 huge pages, odd
  const std::string shape = "[" + std::to_string(kCount) + "]";
  auto g = parse_graph(R"({"format": "kiln.graph/1", "name": "fresh",
      "inputs": [{"name": "x", "dtype": "f32", "shape": )" +
                           shape + R"(}],
      "nodes": [{"name": "y", "op": "aten.mul.Tensor", "args": ["%x", 3.0]}],
      "outputs": ["%y"]})",
                       "fresh", registry);
  ASSERT_TRUE(g) << g.error().to_string();
  auto plugin =
      load_plugin(PluginConfig{"cpp_openmp", "", {}}, test::plugin_dir() + "/kiln_cpp_openmp.so",
                  logging, AbiVersion{KILN_ABI_MAJOR, GetParam()});
  ASSERT_TRUE(plugin) << plugin.error().to_string();
  const DiskCache cache("", 0, logging.get("cache"));
  auto compiled = compile_for_device(*g, registry, *plugin, 0, cache, logging);
  ASSERT_TRUE(compiled) << compiled.error().to_string();

  {
    Mapping probe(2 * kHuge);
    ASSERT_NE(probe.base, 0u);
    if (!advise_huge_pages(HugePagePolicy{Mode::Madvise, kHuge}, probe.unaligned(), 2 * kHuge))
      GTEST_SKIP() << "this kernel refuses MADV_HUGEPAGE (built without transparent huge pages)";
  }
  const TensorType type = g->type(g->inputs[0]);
  const auto seed =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const HostTensor x = random_tensor(type, seed);
  for (bool on : {false, true}) {
    compiled->set_huge_pages(on ? HugePagePolicy{Mode::Madvise, kHuge} : HugePagePolicy{});
    Mapping in(x.bytes().size()), out(x.bytes().size());
    ASSERT_NE(in.base, 0u);
    ASSERT_NE(out.base, 0u);
    auto* in_data = reinterpret_cast<float*>(in.unaligned());
    auto* out_data = reinterpret_cast<float*>(out.unaligned());
    std::memcpy(in_data, x.bytes().data(), x.bytes().size());
    for (int64_t i = 0; i < kCount; ++i) out_data[i] = NAN;
    ASSERT_TRUE(compiled->run_into({{in_data, type, false}}, {{out_data, type, false}}));
    const uintptr_t out_page = out.unaligned() - 4096 + kHuge;
    const uintptr_t in_page = in.unaligned() - 4096 + kHuge;
    const bool in_place = GetParam() >= 1;  // ABI 1.0: the plugin cannot use caller memory
    EXPECT_EQ(asked_for_huge_pages(out_page), on && in_place) << vm_flags_at(out_page);
    EXPECT_FALSE(asked_for_huge_pages(in_page)) << "inputs are only read";
    auto oracle = run_oracle(*g, {x});
    ASSERT_TRUE(oracle) << oracle.error().to_string();
    HostTensor got = HostTensor::zeros(type.dtype, type.sizes);
    std::memcpy(const_cast<std::byte*>(got.bytes().data()), out_data, got.bytes().size());
    const Comparison c = oracle->compare(0, got);
    EXPECT_TRUE(c.ok()) << c.mismatches << " mismatches, first at " << c.first_mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(HostMinor, HugePagesRunInto, ::testing::Values(0u, 1u));

}  // namespace
}  // namespace kiln
